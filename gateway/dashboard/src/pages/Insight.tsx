export function InsightPage() {
  return <p>building</p>;
}
