// Imported first by the entry points: an older Node fails later with an obscure import error.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(`Node.js 22.18 or newer is required (24 LTS recommended); this is ${process.version}.`);
  process.exit(1);
}
export {};
