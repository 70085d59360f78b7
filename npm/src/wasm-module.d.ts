// workerd's bundler (wrangler) turns a .wasm import into a WebAssembly.Module (entry-workerd.js).
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
