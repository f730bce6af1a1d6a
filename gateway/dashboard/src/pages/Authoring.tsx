export function AuthoringPage() {
  return <p>building</p>;
}
