;; Where the JSON object or array that starts at the first input byte ends, 64 bytes at a time with 128-bit SIMD.
;; The same answer as `endOfContainerScalar` in container-end.ts, byte for byte, on every input: the scalar version
;; is the specification, and the tests hold the two to it. Source of container-end-wasm.ts (`npm run wasm`).
;;
;; Memory: bytes 0-511 hold the closers still expected (the bracket stack, MAX_DEPTH in container-end.ts), the input
;; starts at 1024 (INPUT_OFFSET there) and is followed by at least 64 spaces, so the last block reads padding, never a
;; stale byte.
;;
;; Per block, as simdjson's stage 1 does it:
;;   - bit masks of quotes, backslashes, opening and closing brackets and control characters;
;;   - escaped characters from runs of backslashes (simdjson's find_escaped_branchless), the carry kept across blocks;
;;   - the bytes inside strings as the prefix XOR of the unescaped quotes (opening quote in, closing quote out);
;;   - brackets outside strings, taken in order against the stack.
;; Errors are positional, as in the scalar scan: a control character inside a string or a backslash outside one
;; ends the scan with -1 only if it comes before the closing bracket.
(module
  (memory (export "memory") 1)

  (func $bits (param $a v128) (param $b v128) (param $c v128) (param $d v128) (result i64)
    (i64.or
      (i64.or
        (i64.extend_i32_u (i8x16.bitmask (local.get $a)))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $b))) (i64.const 16)))
      (i64.or
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $c))) (i64.const 32))
        (i64.shl (i64.extend_i32_u (i8x16.bitmask (local.get $d))) (i64.const 48)))))

  ;; Returns the length of the container (the offset just past its closing bracket), or -1.
  (func (export "endOfContainer") (param $length i32) (result i32)
    (local $p i32) (local $end i32) (local $depth i32) (local $at i32) (local $byte i32)
    (local $v0 v128) (local $v1 v128) (local $v2 v128) (local $v3 v128)
    (local $w0 v128) (local $w1 v128) (local $w2 v128) (local $w3 v128)
    (local $quote i64) (local $backslash i64) (local $open i64) (local $close i64) (local $control i64)
    (local $prevEscaped i64) (local $prevInString i64)
    (local $unescaped i64) (local $followsEscape i64) (local $oddStarts i64) (local $sum i64) (local $escaped i64)
    (local $inString i64) (local $errors i64) (local $brackets i64) (local $lowest i64)
    (local.set $p (i32.const 1024))
    (local.set $end (i32.add (i32.const 1024) (local.get $length)))
    (block $done
      (loop $block
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $v0 (v128.load offset=0 (local.get $p)))
        (local.set $v1 (v128.load offset=16 (local.get $p)))
        (local.set $v2 (v128.load offset=32 (local.get $p)))
        (local.set $v3 (v128.load offset=48 (local.get $p)))
        (local.set $quote (call $bits
          (i8x16.eq (local.get $v0) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
          (i8x16.eq (local.get $v1) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
          (i8x16.eq (local.get $v2) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
          (i8x16.eq (local.get $v3) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))))
        (local.set $backslash (call $bits
          (i8x16.eq (local.get $v0) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))
          (i8x16.eq (local.get $v1) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))
          (i8x16.eq (local.get $v2) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))
          (i8x16.eq (local.get $v3) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c))))
        ;; With bit 0x20 set, `[` (0x5b) reads as `{` (0x7b) and `]` (0x5d) as `}` (0x7d); no other byte does.
        (local.set $w0 (v128.or (local.get $v0) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $w1 (v128.or (local.get $v1) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $w2 (v128.or (local.get $v2) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $w3 (v128.or (local.get $v3) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))
        (local.set $open (call $bits
          (i8x16.eq (local.get $w0) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b))
          (i8x16.eq (local.get $w1) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b))
          (i8x16.eq (local.get $w2) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b))
          (i8x16.eq (local.get $w3) (v128.const i8x16 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b 0x7b))))
        (local.set $close (call $bits
          (i8x16.eq (local.get $w0) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d))
          (i8x16.eq (local.get $w1) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d))
          (i8x16.eq (local.get $w2) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d))
          (i8x16.eq (local.get $w3) (v128.const i8x16 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d 0x7d))))
        (local.set $control (call $bits
          (i8x16.lt_u (local.get $v0) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
          (i8x16.lt_u (local.get $v1) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
          (i8x16.lt_u (local.get $v2) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))
          (i8x16.lt_u (local.get $v3) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20))))

        ;; Escaped characters: in a run of backslashes every second one is escaped, and so is the character after
        ;; an odd run. A run that starts on an odd bit is told apart by the carry of an addition.
        (local.set $unescaped (i64.and (local.get $backslash) (i64.xor (local.get $prevEscaped) (i64.const -1))))
        (local.set $followsEscape (i64.or (i64.shl (local.get $unescaped) (i64.const 1)) (local.get $prevEscaped)))
        (local.set $oddStarts (i64.and
          (i64.and (local.get $unescaped) (i64.const 0xAAAAAAAAAAAAAAAA))
          (i64.xor (local.get $followsEscape) (i64.const -1))))
        (local.set $sum (i64.add (local.get $oddStarts) (local.get $unescaped)))
        (local.set $prevEscaped (i64.extend_i32_u (i64.lt_u (local.get $sum) (local.get $unescaped))))
        (local.set $escaped (i64.and
          (i64.xor (i64.const 0x5555555555555555) (i64.shl (local.get $sum) (i64.const 1)))
          (local.get $followsEscape)))

        ;; Inside strings: the prefix XOR of the real quotes, continued from the block before.
        (local.set $inString (i64.and (local.get $quote) (i64.xor (local.get $escaped) (i64.const -1))))
        (local.set $inString (i64.xor (local.get $inString) (i64.shl (local.get $inString) (i64.const 1))))
        (local.set $inString (i64.xor (local.get $inString) (i64.shl (local.get $inString) (i64.const 2))))
        (local.set $inString (i64.xor (local.get $inString) (i64.shl (local.get $inString) (i64.const 4))))
        (local.set $inString (i64.xor (local.get $inString) (i64.shl (local.get $inString) (i64.const 8))))
        (local.set $inString (i64.xor (local.get $inString) (i64.shl (local.get $inString) (i64.const 16))))
        (local.set $inString (i64.xor (local.get $inString) (i64.shl (local.get $inString) (i64.const 32))))
        (local.set $inString (i64.xor (local.get $inString) (local.get $prevInString)))
        (local.set $prevInString (i64.shr_s (local.get $inString) (i64.const 63)))

        (local.set $errors (i64.or
          (i64.and (local.get $control) (local.get $inString))
          (i64.and (local.get $backslash) (i64.xor (local.get $inString) (i64.const -1)))))
        (local.set $brackets (i64.and
          (i64.or (local.get $open) (local.get $close))
          (i64.xor (local.get $inString) (i64.const -1))))

        (block $blockDone
          (loop $bracket
            (br_if $blockDone (i64.eqz (local.get $brackets)))
            (local.set $lowest (i64.and (local.get $brackets) (i64.sub (i64.const 0) (local.get $brackets))))
            ;; An error before this bracket ends the scan where the scalar scan would have stopped.
            (if (i64.ne (i64.and (local.get $errors) (i64.sub (local.get $lowest) (i64.const 1))) (i64.const 0))
              (then (return (i32.const -1))))
            (local.set $at (i32.add (local.get $p) (i32.wrap_i64 (i64.ctz (local.get $brackets)))))
            (local.set $byte (i32.load8_u (local.get $at)))
            (if (i32.eq (i32.or (local.get $byte) (i32.const 0x20)) (i32.const 0x7b))
              (then
                (if (i32.eq (local.get $depth) (i32.const 512)) (then (return (i32.const -1))))
                ;; `{` + 2 is `}`, `[` + 2 is `]`.
                (i32.store8 (local.get $depth) (i32.add (local.get $byte) (i32.const 2)))
                (local.set $depth (i32.add (local.get $depth) (i32.const 1))))
              (else
                (if (i32.eqz (local.get $depth)) (then (return (i32.const -1))))
                (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
                (if (i32.ne (i32.load8_u (local.get $depth)) (local.get $byte)) (then (return (i32.const -1))))
                (if (i32.eqz (local.get $depth))
                  (then (return (i32.sub (i32.add (local.get $at) (i32.const 1)) (i32.const 1024)))))))
            (local.set $brackets (i64.xor (local.get $brackets) (local.get $lowest)))
            (br $bracket)))
        (if (i64.ne (local.get $errors) (i64.const 0)) (then (return (i32.const -1))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br $block)))
    (i32.const -1)))
