// gpumem as an ES module: the WebAssembly build (gpumem.cjs, one self-contained file) re-exported.
//
//   import createGpumem from 'gpumem';
//   const gpumem = await createGpumem();
//   const result = JSON.parse(gpumem.estimate(JSON.stringify({ model: { preset: 'llama3-8b' } })));
//
// Every function takes and returns JSON text (version() returns plain text); nothing throws on bad
// input: an invalid document comes back as {"ok": false, "errors": [...]}. index.d.ts types them.
import createGpumem from './gpumem.cjs';

export default createGpumem;
export { createGpumem };
