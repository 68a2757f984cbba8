package sqlitefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

const (
	walHeaderSize   = 32
	frameHeaderSize = 24
	walVersion      = 3007000
)

// walPos is a place in a log: the offset of a frame, and the checksum
// that frame's runs on from.
type walPos struct {
	off    int64
	s0, s1 uint32
}

// scanWAL finds the committed frames of the log as SQLite's recovery
// does: a frame counts when its salts are the header's and its checksum
// (running from the header's through every frame before it) holds; the
// frames after the last commit frame are a transaction still being
// written, and are not read. A log whose header does not hold is empty.
func (db *DB) scanWAL() error {
	start, ok, err := db.walStart(db.wal, db.walHeader[:])
	if err != nil || !ok {
		return err
	}
	db.frames = map[uint32]int64{}
	db.walEnd = start
	return db.commits(db.wal, start, func(pages map[uint32]int64, size uint32, end walPos) bool {
		for p, at := range pages {
			db.frames[p] = at
		}
		db.pages, db.walEnd = size, end
		return true
	})
}

// walStart reads a log's header into h and checks it. ok is false for a
// log SQLite would take as empty: too short, another magic number or a
// checksum that fails. A log of another page size is malformed.
func (db *DB) walStart(w *os.File, h []byte) (walPos, bool, error) {
	if _, err := w.ReadAt(h, 0); err != nil {
		if errors.Is(err, io.EOF) {
			clear(h)
			return walPos{}, false, nil
		}
		return walPos{}, false, fmt.Errorf("%s-wal: %w", db.path, err)
	}
	magic := binary.BigEndian.Uint32(h)
	if magic&^1 != 0x377f0682 {
		return walPos{}, false, nil
	}
	if v := binary.BigEndian.Uint32(h[4:]); v != walVersion {
		return walPos{}, false, fmt.Errorf("%s-wal: log format %d, not %d", db.path, v, walVersion)
	}
	s0, s1 := walSum(magic&1 == 1, h[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(h[24:]) || s1 != binary.BigEndian.Uint32(h[28:]) {
		return walPos{}, false, nil
	}
	if ps := binary.BigEndian.Uint32(h[8:]); int(ps) != db.pageSize {
		return walPos{}, false, fmt.Errorf("%w: %s-wal: pages of %d bytes in a database of %d", ErrMalformed, db.path, ps, db.pageSize)
	}
	return walPos{off: walHeaderSize, s0: s0, s1: s1}, true, nil
}

// commits walks the valid frames of log w from pos, whose header is in
// the first bytes of w, and hands fn each transaction committed: the
// offset of each page's data in it, the database's size after it, and
// where the next frame begins; until fn returns false or the frames end.
func (db *DB) commits(w *os.File, pos walPos, fn func(pages map[uint32]int64, size uint32, end walPos) bool) error {
	var h [walHeaderSize]byte
	if _, err := w.ReadAt(h[:], 0); err != nil {
		return nil
	}
	big := binary.BigEndian.Uint32(h[:])&1 == 1
	pending := map[uint32]int64{}
	r := bufio.NewReaderSize(io.NewSectionReader(w, pos.off, 1<<62), 1<<16)
	frame := make([]byte, frameHeaderSize+db.pageSize)
	s0, s1 := pos.s0, pos.s1
	for off := pos.off; ; off += int64(len(frame)) {
		if _, err := io.ReadFull(r, frame); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return fmt.Errorf("%s-wal: %w", db.path, err)
		}
		n, size := binary.BigEndian.Uint32(frame), binary.BigEndian.Uint32(frame[4:])
		if n == 0 || [8]byte(frame[8:16]) != [8]byte(h[16:24]) {
			return nil
		}
		s0, s1 = walSum(big, frame[:8], s0, s1)
		s0, s1 = walSum(big, frame[frameHeaderSize:], s0, s1)
		if s0 != binary.BigEndian.Uint32(frame[16:]) || s1 != binary.BigEndian.Uint32(frame[20:]) {
			return nil
		}
		pending[n] = off + frameHeaderSize
		if size != 0 {
			if !fn(pending, size, walPos{off: off + int64(len(frame)), s0: s0, s1: s1}) {
				return nil
			}
			clear(pending)
		}
	}
}

// committedOver reports whether a transaction committed to log w after
// pos wrote a page this snapshot read from the database file: a
// checkpoint may have copied it there while it was read.
func (db *DB) committedOver(w *os.File, pos walPos) bool {
	over := false
	err := db.commits(w, pos, func(pages map[uint32]int64, _ uint32, _ walPos) bool {
		for p := range pages {
			if _, read := db.sums[p]; read {
				over = true
				return false
			}
		}
		return true
	})
	return over || err != nil
}

// walSum runs the log's checksum over b (a multiple of 8 bytes) from s0
// and s1, its words in the byte order the log's magic number says.
func walSum(big bool, b []byte, s0, s1 uint32) (uint32, uint32) {
	if big {
		for i := 0; i+8 <= len(b); i += 8 {
			s0 += binary.BigEndian.Uint32(b[i:]) + s1
			s1 += binary.BigEndian.Uint32(b[i+4:]) + s0
		}
		return s0, s1
	}
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += binary.LittleEndian.Uint32(b[i:]) + s1
		s1 += binary.LittleEndian.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}
