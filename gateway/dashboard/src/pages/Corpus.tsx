export function CorpusPage() {
  return <p>building</p>;
}
