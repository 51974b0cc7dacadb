// Just enough PNG to stitch WebKit's viewport screenshots into one of a whole page or element
// (webkit-page.js): reads 8-bit RGB or RGBA without interlacing (what WebKit writes) and writes
// 8-bit RGB. The format: https://www.w3.org/TR/png-3/.
import { crc32, deflateSync, inflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

// { width, height, pixels }: pixels holds 3 bytes (RGB) a pixel, row after row.
export function decodePng(png) {
  if (!png.subarray(0, 8).equals(SIGNATURE)) throw new Error('not a PNG');
  let width, height, channels;
  const data = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      const [depth, colour, , , interlace] = body.subarray(8, 13);
      if (depth !== 8 || ![2, 6].includes(colour) || interlace) throw new Error(`PNG of depth ${depth}, colour type ${colour}, interlace ${interlace}: not read here`);
      [width, height, channels] = [body.readUInt32BE(0), body.readUInt32BE(4), colour === 2 ? 3 : 4];
    } else if (type === 'IDAT') data.push(body);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const rows = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) unfilter(raw, y * (stride + 1), rows, y * stride, stride, channels);
  if (channels === 3) return { width, height, pixels: rows };
  const pixels = Buffer.alloc(width * height * 3); // drop alpha: a screenshot is opaque
  for (let i = 0, j = 0; i < rows.length; i += 4, j += 3) rows.copy(pixels, j, i, i + 3);
  return { width, height, pixels };
}

// Undoes the filter (type 0–4, the spec's "Filtering") of the row at raw[from] into
// out[to…to + stride], whose row above is out[to - stride…].
function unfilter(raw, from, out, to, stride, bpp) {
  const filter = raw[from];
  for (let i = 0; i < stride; i++) {
    const x = raw[from + 1 + i];
    const a = i >= bpp ? out[to + i - bpp] : 0;
    const b = to >= stride ? out[to + i - stride] : 0;
    const c = i >= bpp && to >= stride ? out[to + i - stride - bpp] : 0;
    let predicted = 0;
    if (filter === 1) predicted = a;
    else if (filter === 2) predicted = b;
    else if (filter === 3) predicted = (a + b) >> 1;
    else if (filter === 4) {
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      predicted = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    } else if (filter !== 0) throw new Error(`PNG row filter ${filter}`);
    out[to + i] = (x + predicted) & 0xff;
  }
}

export function encodePng({ width, height, pixels }) {
  const stride = width * 3;
  const raw = Buffer.alloc(height * (stride + 1)); // filter 0 (none) on every row
  for (let y = 0; y < height; y++) pixels.copy(raw, y * (stride + 1) + 1, y * stride, (y + 1) * stride);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, filters, no interlace
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type, body) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])));
  return Buffer.concat([head, body, crc]);
}
