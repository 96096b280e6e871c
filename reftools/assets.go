package reftools

// pngImage is a 1×1 red pixel (RGBA, 8 bits per channel): the PNG
// signature, IHDR, one zlib-compressed IDAT row and IEND, all with valid
// CRCs. It is the image the conformance suite's own reference server sends.
var pngImage = []byte{
	0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', // signature
	0x00, 0x00, 0x00, 0x0d, 'I', 'H', 'D', 'R', // IHDR, 13 bytes
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // width 1, height 1
	0x08, 0x06, 0x00, 0x00, 0x00, // 8-bit RGBA, deflate, no filter, no interlace
	0x1f, 0x15, 0xc4, 0x89, // CRC
	0x00, 0x00, 0x00, 0x0d, 'I', 'D', 'A', 'T', // IDAT, 13 bytes
	0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, // zlib: filter 0, ff 00 00 ff
	0x5f, 0xc8, 0xf1, 0xd2, // CRC
	0x00, 0x00, 0x00, 0x00, 'I', 'E', 'N', 'D', // IEND
	0xae, 0x42, 0x60, 0x82, // CRC
}

// wavAudio is one silent sample of 16-bit mono PCM at 8 kHz: a RIFF/WAVE
// file with a 16-byte fmt chunk and a 2-byte data chunk, every size field
// consistent with the bytes that follow it.
var wavAudio = []byte{
	'R', 'I', 'F', 'F', 38, 0, 0, 0, 'W', 'A', 'V', 'E', // RIFF, 38 = 4 + (8+16) + (8+2)
	'f', 'm', 't', ' ', 16, 0, 0, 0, // fmt chunk, 16 bytes
	1, 0, 1, 0, // PCM, one channel
	0x40, 0x1f, 0, 0, // 8000 samples per second
	0x80, 0x3e, 0, 0, // 16000 bytes per second
	2, 0, 16, 0, // 2 bytes per frame, 16 bits per sample
	'd', 'a', 't', 'a', 2, 0, 0, 0, // data chunk, 2 bytes
	0, 0, // one silent sample
}
