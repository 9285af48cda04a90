/**
 * Real PNG files for tests (signature, IHDR, IDAT, IEND with correct CRCs), so uploads pass the
 * type check by bytes and browsers draw them.
 */
import { crc32, deflateSync } from 'node:zlib'

/**
 * A w x h RGB PNG filled with one grey level.
 * @param w width in pixels
 * @param h height in pixels
 * @param seed the grey level (0-255); different seeds give different bytes
 * @returns the file's bytes
 */
export function makePng (w = 1, h = 1, seed = 0): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4); len.writeUInt32BE(data.length)
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data])
    const c = Buffer.alloc(4); c.writeUInt32BE(crc32(td))
    return Buffer.concat([len, td, c])
  }
  const ihdr = Buffer.alloc(13); ihdr.writeUInt32BE(w, 0); ihdr.writeUInt32BE(h, 4); ihdr[8] = 8; ihdr[9] = 2
  const row = Buffer.alloc(1 + w * 3, seed & 0xff); row[0] = 0
  const raw = Buffer.concat(Array.from({ length: h }, () => row))
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
}
