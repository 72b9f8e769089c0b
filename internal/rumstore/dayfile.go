package rumstore

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
)

// A day object holds every table of a website's UTC day as sections, one after the other in
// the order of their names, then its directory (each section's name and length, compressed
// with DEFLATE), the directory's length (4 bytes, big-endian) and the mark "OVR1". The day's
// pointer item carries the same directory, so that a report reads the sections it needs by
// range without reading the object's end first.
//
// Section names: "t/{dim}/{metric}/{shard}" a running-total table, "d/{dim}/{metric}/{shard}"
// a daily table, "h" the day's distinct pages (HyperLogLog), "v" the IDs of the views folded
// into the day (for dedupe), "a" the log entries the object was last written with.

const fileMark = "OVR1"

var errCorrupt = errors.New("rumstore: corrupt day object")

const (
	sectionDistinct = "h"
	sectionSeen     = "v"
	sectionApplied  = "a"
	prefixTotals    = "t/"
	prefixDaily     = "d/"
)

// cellName is a table's section name.
func cellName(c model.RUMCell) string {
	p := prefixTotals
	if c.Daily {
		p = prefixDaily
	}
	return p + c.Dim + "/" + c.Metric + "/" + strconv.Itoa(c.Shard)
}

// section is one entry of a directory: its name and where it lies in the object.
type section struct {
	name     string
	off, len int64
}

// encodeDir writes a directory of sections in object order.
func encodeDir(secs []section) []byte {
	var raw []byte
	for _, s := range secs {
		raw = binary.AppendUvarint(raw, uint64(len(s.name)))
		raw = append(raw, s.name...)
		raw = binary.AppendUvarint(raw, uint64(s.len))
	}
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestSpeed)
	_, _ = w.Write(raw)
	_ = w.Close()
	return b.Bytes()
}

// decodeDir reads a directory.
func decodeDir(dir []byte) ([]section, error) {
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(dir)))
	if err != nil {
		return nil, fmt.Errorf("%w: directory: %v", errCorrupt, err)
	}
	var secs []section
	var off int64
	for len(raw) > 0 {
		n, k := binary.Uvarint(raw)
		if k <= 0 || uint64(len(raw)-k) < n {
			return nil, errCorrupt
		}
		name := string(raw[k : k+int(n)])
		raw = raw[k+int(n):]
		l, k := binary.Uvarint(raw)
		if k <= 0 {
			return nil, errCorrupt
		}
		raw = raw[k:]
		secs = append(secs, section{name: name, off: off, len: int64(l)})
		off += int64(l)
	}
	return secs, nil
}

// encodeFile writes the sections (name to bytes) as a day object and returns it with its
// directory.
func encodeFile(sections map[string][]byte) (body, dir []byte) {
	names := make([]string, 0, len(sections))
	size := 0
	for name, data := range sections {
		names = append(names, name)
		size += len(data)
	}
	slices.Sort(names)
	secs := make([]section, len(names))
	body = make([]byte, 0, size+len(names)*8+64)
	for i, name := range names {
		secs[i] = section{name: name, off: int64(len(body)), len: int64(len(sections[name]))}
		body = append(body, sections[name]...)
	}
	dir = encodeDir(secs)
	body = append(body, dir...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(dir)))
	body = append(body, fileMark...)
	return body, dir
}

// decodeFile reads a day object into its sections, which share the object's bytes.
func decodeFile(body []byte) (map[string][]byte, error) {
	if len(body) < 8 || string(body[len(body)-4:]) != fileMark {
		return nil, errCorrupt
	}
	n := int(binary.BigEndian.Uint32(body[len(body)-8:]))
	if n > len(body)-8 {
		return nil, errCorrupt
	}
	end := len(body) - 8 - n
	secs, err := decodeDir(body[end : len(body)-8])
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(secs))
	for _, s := range secs {
		if s.off+s.len > int64(end) {
			return nil, errCorrupt
		}
		out[s.name] = body[s.off : s.off+s.len : s.off+s.len]
	}
	return out, nil
}

// encodeApplied and decodeApplied write and read the list of log entries an object was last
// written with.
func encodeApplied(ids []string) []byte { return []byte(strings.Join(ids, "\n")) }

func decodeApplied(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\n")
}
