import { registerHooks } from 'node:module';

/**
 * Loaded with `--import` into a child process: records every package the process imports
 * (static or dynamic) and prints them as one JSON line, `{"packagesLoaded":[...]}`, at exit. For
 * checking that code meant to load on first use (Baileys, sharp, ffmpeg) is not loaded before.
 */
const packages = new Set<string>();

function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.includes(':')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    const name = packageOf(specifier);
    if (name) packages.add(name);
    return nextResolve(specifier, context);
  },
});

process.on('exit', () => {
  process.stdout.write(`${JSON.stringify({ packagesLoaded: [...packages].sort() })}\n`);
});
