export function StoresPage() {
  return <p>building</p>;
}
