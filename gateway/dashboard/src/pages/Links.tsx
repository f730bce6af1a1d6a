export function LinksPage() {
  return <p>building</p>;
}
