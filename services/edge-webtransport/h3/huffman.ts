/**
 * Decoder of the HPACK/QPACK Huffman code (RFC 7541 Appendix B, reused by QPACK, RFC 9204
 * §4.1.2). Browsers Huffman-encode header values when it is shorter, e.g. the `:path` of a
 * WebTransport CONNECT request, so the server must decode it.
 *
 * The code is canonical: codes are assigned in order of (length, symbol). It is therefore
 * fully described by the code length of each of the 257 symbols (256 octets and EOS), listed
 * below grouped by length as in the RFC table; the codes themselves are rebuilt at load time.
 */
import { WebTransportError } from '../errors.ts';

/** Symbols per code length (bits), from RFC 7541 Appendix B. 256 is EOS. */
const SYMBOLS_BY_LENGTH: ReadonlyArray<readonly [number, readonly (number | string)[]]> = [
  [5, ['0', '1', '2', 'a', 'c', 'e', 'i', 'o', 's', 't']],
  [6, [' ', '%', '-', '.', '/', '3', '4', '5', '6', '7', '8', '9', '=', 'A', '_', 'b', 'd', 'f', 'g']],
  [6, ['h', 'l', 'm', 'n', 'p', 'r', 'u']],
  [7, [':', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S']],
  [7, ['T', 'U', 'V', 'W', 'Y', 'j', 'k', 'q', 'v', 'w', 'x', 'y', 'z']],
  [8, ['&', '*', ',', ';', 'X', 'Z']],
  [10, ['!', '"', '(', ')', '?']],
  [11, ["'", '+', '|']],
  [12, ['#', '>']],
  [13, [0, '$', '@', '[', ']', '~']],
  [14, ['^', '}']],
  [15, ['<', '`', '{']],
  [19, ['\\', 195, 208]],
  [20, [128, 130, 131, 162, 184, 194, 224, 226]],
  [21, [153, 161, 167, 172, 176, 177, 179, 209, 216, 217, 227, 229, 230]],
  [22, [129, 132, 133, 134, 136, 146, 154, 156, 160, 163, 164, 169, 170, 173, 178, 181, 185, 186, 187]],
  [22, [189, 190, 196, 198, 228, 232, 233]],
  [23, [1, 135, 137, 138, 139, 140, 141, 143, 147, 149, 150, 151, 152, 155, 157, 158, 165, 166, 168]],
  [23, [174, 175, 180, 182, 183, 188, 191, 197, 231, 239]],
  [24, [9, 142, 144, 145, 148, 159, 171, 206, 215, 225, 236, 237]],
  [25, [199, 207, 234, 235]],
  [26, [192, 193, 200, 201, 202, 205, 210, 213, 218, 219, 238, 240, 242, 243, 255]],
  [27, [203, 204, 211, 212, 214, 221, 222, 223, 241, 244, 245, 246, 247, 248, 250, 251, 252, 253, 254]],
  [28, [2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28, 29, 30]],
  [28, [31, 127, 220, 249]],
  [30, [10, 13, 22, 256]],
];

export const EOS = 256;
const MAX_LENGTH = 30;

/** Code length in bits of each symbol 0..256. */
export const CODE_LENGTHS: readonly number[] = (() => {
  const lengths = new Array<number>(257).fill(0);
  for (const [len, symbols] of SYMBOLS_BY_LENGTH) {
    for (const s of symbols) lengths[typeof s === 'string' ? s.charCodeAt(0) : s] = len;
  }
  return lengths;
})();

/** Canonical decoding tables: per length, the first code, the number of codes, and the symbols in code order. */
const tables = (() => {
  const count = new Array<number>(MAX_LENGTH + 1).fill(0);
  for (const len of CODE_LENGTHS) count[len] = (count[len] ?? 0) + 1;
  const order = [...CODE_LENGTHS.keys()].sort(
    (a, b) => (CODE_LENGTHS[a] as number) - (CODE_LENGTHS[b] as number) || a - b,
  );
  const first = new Array<number>(MAX_LENGTH + 1).fill(0);
  const offset = new Array<number>(MAX_LENGTH + 1).fill(0);
  let code = 0;
  let index = 0;
  for (let len = 1; len <= MAX_LENGTH; len++) {
    first[len] = code;
    offset[len] = index;
    const n = count[len] as number;
    code = (code + n) * 2;
    index += n;
  }
  return { count, first, offset, order };
})();

/** A Huffman-coded string that breaks the rules of RFC 7541 §5.2. */
export class HuffmanError extends WebTransportError {
  declare readonly code: 'HUFFMAN_INVALID';

  constructor(message: string) {
    super('HUFFMAN_INVALID', message);
  }
}

/**
 * Decodes a Huffman-coded octet string.
 * @throws HuffmanError when it contains EOS, a code longer than 30 bits, or padding that is longer
 *   than 7 bits or not all ones (RFC 7541 §5.2 requires treating each as a decoding error).
 */
export function huffmanDecode(input: Uint8Array): Uint8Array {
  const out: number[] = [];
  let code = 0;
  let len = 0;
  for (const byte of input) {
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((byte >> bit) & 1);
      len++;
      const k = code - (tables.first[len] as number);
      if (k >= 0 && k < (tables.count[len] as number)) {
        const symbol = tables.order[(tables.offset[len] as number) + k] as number;
        if (symbol === EOS) throw new HuffmanError('EOS inside a Huffman-coded string');
        out.push(symbol);
        code = 0;
        len = 0;
      } else if (len >= MAX_LENGTH) {
        throw new HuffmanError('invalid Huffman code');
      }
    }
  }
  if (len > 7) throw new HuffmanError('Huffman padding longer than 7 bits');
  if (code !== 2 ** len - 1) throw new HuffmanError('Huffman padding is not a prefix of EOS');
  return Uint8Array.from(out);
}
