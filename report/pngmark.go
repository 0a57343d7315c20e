package report

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"

	"github.com/commcost/commcost/results"
)

// A PNG commcost draws carries a tEXt chunk "Software" = "commcost" right
// after its header chunk (PNG 1.2, section 11.3.4.3): the writers that
// choose file names in a user's directory (report's plots/, compare
// --plot) replace only the images that carry it (OwnPNG), never a user's
// file of the same name.

// pngSignature is the 8 bytes every PNG starts with.
const pngSignature = "\x89PNG\r\n\x1a\n"

// pngMark is the tEXt chunk's keyword and text, NUL-separated.
const pngMark = "Software\x00commcost"

// pngMarkEnd is the offset just past the mark in a marked PNG: the
// signature, the IHDR chunk (4 + 4 + 13 + 4 bytes) and the tEXt chunk.
const pngMarkEnd = len(pngSignature) + 25 + 12 + len(pngMark)

// MarkPNG inserts the mark after the IHDR chunk of png; data that is not
// a PNG starting with IHDR comes back as it is.
func MarkPNG(png []byte) []byte {
	at := len(pngSignature) + 25
	if len(png) < at || string(png[:len(pngSignature)]) != pngSignature || string(png[12:16]) != "IHDR" {
		return png
	}
	var chunk bytes.Buffer
	_ = binary.Write(&chunk, binary.BigEndian, uint32(len(pngMark)))
	chunk.WriteString("tEXt" + pngMark)
	_ = binary.Write(&chunk, binary.BigEndian, crc32.ChecksumIEEE(chunk.Bytes()[4:]))
	out := make([]byte, 0, len(png)+chunk.Len())
	out = append(out, png[:at]...)
	out = append(out, chunk.Bytes()...)
	return append(out, png[at:]...)
}

// CheckOwnPlot refuses (results.CheckOwn, bad input) to replace path with
// a plot when it holds something other than a PNG commcost drew.
func CheckOwnPlot(path string) error {
	return results.CheckOwn(path, "plot", pngMarkEnd, OwnPNG)
}

// OwnPNG reports whether head, the first bytes of a file, is a PNG that
// MarkPNG marked.
func OwnPNG(head []byte) bool {
	return len(head) >= pngMarkEnd && string(head[:len(pngSignature)]) == pngSignature &&
		bytes.Equal(head[pngMarkEnd-4-len(pngMark)-4:pngMarkEnd-4], []byte("tEXt"+pngMark))
}
