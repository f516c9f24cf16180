// The part of the WebAssembly JavaScript API that src/server/container-end.ts uses. TypeScript ships these types
// only in its DOM library, which would also declare window, document and the rest of a browser for a server.
declare namespace WebAssembly {
  class Module {
    constructor(bytes: ArrayBufferView | ArrayBuffer);
  }
  class Instance {
    constructor(module: Module, imports?: object);
    readonly exports: Record<string, unknown>;
  }
  class Memory {
    private constructor();
    readonly buffer: ArrayBuffer;
    grow(pages: number): number;
  }
}
