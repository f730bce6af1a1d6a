export function RawPage() {
  return <p>building</p>;
}
