;; The endpoints array that starts at the first input byte, checked against the JSON grammar and located element by
;; element: the same answer as `scanEndpointsScalar` in endpoints-scan.ts, on every input. The scalar version is the
;; specification, and the tests hold the two to it. Source of endpoints-scan-wasm.ts (`npm run wasm`).
;;
;; Memory:
;;   0-511        per open container, 1 for an object, 0 for an array (MAX_DEPTH in container-end.ts)
;;   512          the number of elements, written when the scan succeeds
;;   1024-33791   per element, the start and end of its addresses array, or -1 and -1 (MAX_ENDPOINTS)
;;   65536-       the input, followed by at least 64 zero bytes: a zero ends every token (a string scan reads it as a
;;                raw control character), so nothing past the input is ever taken for JSON.
;; Offsets in and out are relative to the input's first byte.
;;
;; A state machine over tokens, as in the scalar version; strings, the bulk of the bytes, are crossed 16 bytes at a
;; time: a block without a quote, a backslash or a control character is skipped whole. Whitespace is looked for only
;; where a byte is 0x20 or below: the API server writes none.
(module
  (memory (export "memory") 2)

  (global $escaped (mut i32) (i32.const 0))

  (func $whitespace (param $i i32) (result i32)
    (local $b i32)
    (block $done
      (loop $next
        (local.set $b (i32.load8_u (local.get $i)))
        (br_if $done
          (i32.eqz
            (i32.or
              (i32.or (i32.eq (local.get $b) (i32.const 0x20)) (i32.eq (local.get $b) (i32.const 0x0a)))
              (i32.or (i32.eq (local.get $b) (i32.const 0x0d)) (i32.eq (local.get $b) (i32.const 0x09))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  (func $isHex (param $b i32) (result i32)
    (i32.or
      (i32.lt_u (i32.sub (local.get $b) (i32.const 0x30)) (i32.const 10))
      (i32.lt_u (i32.sub (i32.or (local.get $b) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))))

  ;; Index past the string whose opening quote is at $at, or -1; $escaped tells whether it holds a backslash.
  (func $string (param $at i32) (result i32)
    (local $i i32) (local $v v128) (local $mask i32) (local $b i32) (local $n i32)
    (global.set $escaped (i32.const 0))
    (local.set $i (i32.add (local.get $at) (i32.const 1)))
    (loop $block
      (local.set $v (v128.load (local.get $i)))
      (local.set $mask (i8x16.bitmask
        (v128.or
          (v128.or
            (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
            (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))
          (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))))
      (if (i32.eqz (local.get $mask))
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 16)))
          (br $block)))
      (local.set $i (i32.add (local.get $i) (i32.ctz (local.get $mask))))
      (local.set $b (i32.load8_u (local.get $i)))
      (if (i32.eq (local.get $b) (i32.const 0x22)) (then (return (i32.add (local.get $i) (i32.const 1)))))
      (if (i32.lt_u (local.get $b) (i32.const 0x20)) (then (return (i32.const -1))))
      ;; A backslash: \uXXXX, or one of " \ / b f n r t.
      (global.set $escaped (i32.const 1))
      (local.set $n (i32.load8_u offset=1 (local.get $i)))
      (if (i32.eq (local.get $n) (i32.const 0x75))
        (then
          (if (i32.and
                (i32.and (call $isHex (i32.load8_u offset=2 (local.get $i))) (call $isHex (i32.load8_u offset=3 (local.get $i))))
                (i32.and (call $isHex (i32.load8_u offset=4 (local.get $i))) (call $isHex (i32.load8_u offset=5 (local.get $i)))))
            (then
              (local.set $i (i32.add (local.get $i) (i32.const 6)))
              (br $block)))
          (return (i32.const -1))))
      (if (i32.or
            (i32.or
              (i32.or (i32.eq (local.get $n) (i32.const 0x22)) (i32.eq (local.get $n) (i32.const 0x5c)))
              (i32.or (i32.eq (local.get $n) (i32.const 0x2f)) (i32.eq (local.get $n) (i32.const 0x62))))
            (i32.or
              (i32.or (i32.eq (local.get $n) (i32.const 0x66)) (i32.eq (local.get $n) (i32.const 0x6e)))
              (i32.or (i32.eq (local.get $n) (i32.const 0x72)) (i32.eq (local.get $n) (i32.const 0x74)))))
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 2)))
          (br $block))))
    (i32.const -1))

  (func $digits (param $at i32) (result i32)
    (local $i i32)
    (local.set $i (local.get $at))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (i32.sub (i32.load8_u (local.get $i)) (i32.const 0x30)) (i32.const 10)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (if (result i32) (i32.eq (local.get $i) (local.get $at)) (then (i32.const -1)) (else (local.get $i))))

  ;; -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
  (func $number (param $at i32) (result i32)
    (local $i i32) (local $b i32)
    (local.set $i (local.get $at))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2d)) (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
    (local.set $b (i32.load8_u (local.get $i)))
    (if (i32.eq (local.get $b) (i32.const 0x30))
      (then (local.set $i (i32.add (local.get $i) (i32.const 1))))
      (else
        (if (i32.ge_u (i32.sub (local.get $b) (i32.const 0x31)) (i32.const 9)) (then (return (i32.const -1))))
        (local.set $i (call $digits (local.get $i)))))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2e))
      (then
        (local.set $i (call $digits (i32.add (local.get $i) (i32.const 1))))
        (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1))))))
    (if (i32.eq (i32.or (i32.load8_u (local.get $i)) (i32.const 0x20)) (i32.const 0x65))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $b (i32.load8_u (local.get $i)))
        (if (i32.or (i32.eq (local.get $b) (i32.const 0x2b)) (i32.eq (local.get $b) (i32.const 0x2d)))
          (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
        (local.set $i (call $digits (local.get $i)))))
    (local.get $i))

  ;; A string, a number, true, false or null at $at, whose first byte is $b; index past it, or -1.
  (func $scalar (param $at i32) (param $b i32) (result i32)
    (if (i32.eq (local.get $b) (i32.const 0x22)) (then (return (call $string (local.get $at)))))
    (if (i32.eq (local.get $b) (i32.const 0x74)) ;; true
      (then (return (select (i32.add (local.get $at) (i32.const 4)) (i32.const -1)
        (i32.eq (i32.load (local.get $at)) (i32.const 0x65757274))))))
    (if (i32.eq (local.get $b) (i32.const 0x6e)) ;; null
      (then (return (select (i32.add (local.get $at) (i32.const 4)) (i32.const -1)
        (i32.eq (i32.load (local.get $at)) (i32.const 0x6c6c756e))))))
    (if (i32.eq (local.get $b) (i32.const 0x66)) ;; false
      (then (return (select (i32.add (local.get $at) (i32.const 5)) (i32.const -1)
        (i32.and
          (i32.eq (i32.load (local.get $at)) (i32.const 0x736c6166))
          (i32.eq (i32.load8_u offset=4 (local.get $at)) (i32.const 0x65)))))))
    (call $number (local.get $at)))

  ;; Returns the length of the array (the offset just past its closing bracket), or -1, also when it is not an array.
  (func (export "scanEndpoints") (result i32)
    (local $i i32) (local $depth i32) (local $count i32) (local $addresses i32) (local $state i32)
    (local $b i32) (local $keyEnd i32) (local $isAddresses i32) (local $inObject i32)
    (local.set $i (i32.const 65536))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x5b)) (then (return (i32.const -1))))
    (local.set $addresses (i32.const -1))
    ;; $state: 0 a value is expected, 1 a key, 2 what follows a value.
    (loop $main
      (if (i32.eq (local.get $state) (i32.const 1))
        (then
          (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)) (then (return (i32.const -1))))
          (local.set $keyEnd (call $string (local.get $i)))
          (if (i32.lt_s (local.get $keyEnd) (i32.const 0)) (then (return (i32.const -1))))
          (local.set $isAddresses (i32.const 0))
          (if (i32.eq (local.get $depth) (i32.const 2))
            (then
              ;; JSON.parse would read an escaped key as the text it stands for: left to JSON.parse.
              (if (global.get $escaped) (then (return (i32.const -1))))
              ;; "addresses": 11 bytes with its quotes; "addresse" read as one little-endian i64.
              (local.set $isAddresses
                (i32.and
                  (i32.eq (i32.sub (local.get $keyEnd) (local.get $i)) (i32.const 11))
                  (i32.and
                    (i64.eq (i64.load offset=1 (local.get $i)) (i64.const 0x6573736572646461))
                    (i32.eq (i32.load8_u offset=9 (local.get $i)) (i32.const 0x73)))))))
          (local.set $i (local.get $keyEnd))
          (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $whitespace (local.get $i)))))
          (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x3a)) (then (return (i32.const -1))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $whitespace (local.get $i)))))
          (if (local.get $isAddresses)
            (then
              ;; The last `addresses` key wins; one whose value is not an array clears the span.
              (i64.store (i32.add (i32.const 1016) (i32.shl (local.get $count) (i32.const 3))) (i64.const -1))
              (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x5b)) (then (local.set $addresses (local.get $i))))))
          (local.set $state (i32.const 0))
          (br $main)))
      (if (i32.eqz (local.get $state))
        (then
          (local.set $b (i32.load8_u (local.get $i)))
          (if (i32.eq (local.get $depth) (i32.const 1))
            (then
              (if (i32.eq (local.get $count) (i32.const 4096)) (then (return (i32.const -1))))
              (i64.store (i32.add (i32.const 1024) (i32.shl (local.get $count) (i32.const 3))) (i64.const -1))
              (local.set $count (i32.add (local.get $count) (i32.const 1)))))
          ;; With bit 0x20 set, `[` reads as `{`; no other byte does.
          (if (i32.eq (i32.or (local.get $b) (i32.const 0x20)) (i32.const 0x7b))
            (then
              (if (i32.eq (local.get $depth) (i32.const 512)) (then (return (i32.const -1))))
              (local.set $inObject (i32.eq (local.get $b) (i32.const 0x7b)))
              (i32.store8 (local.get $depth) (local.get $inObject))
              (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $whitespace (local.get $i)))))
              ;; `{` + 2 is `}`, `[` + 2 is `]`. An empty container: its closing bracket is read as what follows a
              ;; value, and only that (not a comma).
              (local.set $state
                (select (i32.const 2) (local.get $inObject)
                  (i32.eq (i32.load8_u (local.get $i)) (i32.add (local.get $b) (i32.const 2)))))
              (br $main)))
          (if (i32.eqz (local.get $depth)) (then (return (i32.const -1))))
          (local.set $i (call $scalar (local.get $i) (local.get $b)))
          (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const -1))))
          (local.set $state (i32.const 2))
          (br $main)))
      ;; What follows a value: the end, a comma, or the closing bracket of the innermost container.
      (if (i32.eqz (local.get $depth))
        (then
          (i32.store (i32.const 512) (local.get $count))
          (return (i32.sub (local.get $i) (i32.const 65536)))))
      (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $whitespace (local.get $i)))))
      (local.set $b (i32.load8_u (local.get $i)))
      (local.set $inObject (i32.load8_u (i32.sub (local.get $depth) (i32.const 1))))
      (if (i32.eq (local.get $b) (i32.const 0x2c))
        (then
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (if (i32.le_u (i32.load8_u (local.get $i)) (i32.const 0x20)) (then (local.set $i (call $whitespace (local.get $i)))))
          (local.set $state (local.get $inObject))
          (br $main)))
      ;; `]` is 0x5d, `}` is 0x5d + 0x20.
      (if (i32.ne (local.get $b) (i32.add (i32.const 0x5d) (i32.shl (local.get $inObject) (i32.const 5))))
        (then (return (i32.const -1))))
      (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (if (i32.and (i32.eq (local.get $depth) (i32.const 2)) (i32.ge_s (local.get $addresses) (i32.const 0)))
        (then
          (i32.store offset=1016 (i32.shl (local.get $count) (i32.const 3)) (i32.sub (local.get $addresses) (i32.const 65536)))
          (i32.store offset=1020 (i32.shl (local.get $count) (i32.const 3)) (i32.sub (local.get $i) (i32.const 65536)))
          (local.set $addresses (i32.const -1))))
      (br $main))
    (i32.const -1))
)
