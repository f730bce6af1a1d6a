export function TokensPage() {
  return <p>building</p>;
}
