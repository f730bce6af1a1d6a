export function DrawerPage() {
  return <p>building</p>;
}
