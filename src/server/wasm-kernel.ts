// A WebAssembly kernel of the hot path (container-end.wat, endpoints-scan.wat): instantiated once, fed by copying its
// input into its memory. Each kernel has a scalar twin with the same answers; this module only says when the twin
// must answer instead: no kernel (a runtime without WebAssembly SIMD, or --jitless), or memory that cannot grow.
const PAGE_BYTES = 65_536;

export class WasmKernel {
  private bytes: Uint8Array;

  private constructor(
    private readonly memory: WebAssembly.Memory,
    /** The kernel's entry point; its arguments and result are i32s. */
    readonly run: (...args: number[]) => number,
  ) {
    this.bytes = new Uint8Array(memory.buffer);
  }

  /** The kernel, or undefined when this runtime cannot run it: the caller then uses the scalar twin. */
  static load(module: Uint8Array, entry: string): WasmKernel | undefined {
    try {
      const { exports } = new WebAssembly.Instance(new WebAssembly.Module(module));
      const { memory } = exports;
      const run = exports[entry];
      if (!(memory instanceof WebAssembly.Memory) || typeof run !== 'function') return undefined;
      return new WasmKernel(memory, run as (...args: number[]) => number);
    } catch {
      return undefined;
    }
  }

  /**
   * Copies `input` to `offset`, followed by `padding` bytes of `fill`, growing the memory as needed. WebAssembly
   * memory never shrinks: it stays at the largest input seen, at most the 7 MiB body limit, a cost paid once rather
   * than an allocation per review. False when the memory cannot grow (the process is short of memory).
   */
  write(input: Uint8Array, offset: number, padding: number, fill: number): boolean {
    const needed = offset + input.length + padding;
    const have = this.memory.buffer.byteLength;
    if (needed > have) {
      try {
        this.memory.grow(Math.ceil((needed - have) / PAGE_BYTES));
      } catch {
        return false;
      }
    }
    if (this.bytes.buffer !== this.memory.buffer) this.bytes = new Uint8Array(this.memory.buffer);
    this.bytes.set(input, offset);
    this.bytes.fill(fill, offset + input.length, needed);
    return true;
  }

  /** The memory as i32s: valid until the next `write`, which may grow (and so replace) it. */
  int32(): Int32Array {
    return new Int32Array(this.memory.buffer);
  }
}
