package sqlitefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

const (
	walHeaderSize   = 32
	frameHeaderSize = 24
	walVersion      = 3007000
)

// scanWAL finds the committed frames of the log as SQLite's recovery
// does: a frame counts when its salts are the header's and its checksum
// (running from the header's through every frame before it) holds; the
// frames after the last commit frame are a transaction still being
// written, and are not read. A log whose header does not hold is empty.
func (db *DB) scanWAL() error {
	if _, err := db.wal.ReadAt(db.walHeader[:], 0); err != nil {
		if errors.Is(err, io.EOF) {
			db.walHeader = [walHeaderSize]byte{}
			return nil // shorter than a header: empty
		}
		return fmt.Errorf("%s-wal: %w", db.path, err)
	}
	h := db.walHeader[:]
	magic := binary.BigEndian.Uint32(h)
	if magic&^1 != 0x377f0682 {
		return nil
	}
	if v := binary.BigEndian.Uint32(h[4:]); v != walVersion {
		return fmt.Errorf("%s-wal: log format %d, not %d", db.path, v, walVersion)
	}
	if int(binary.BigEndian.Uint32(h[8:])) != db.pageSize {
		return nil
	}
	big := magic&1 == 1
	s0, s1 := walSum(big, h[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(h[24:]) || s1 != binary.BigEndian.Uint32(h[28:]) {
		return nil
	}
	db.frames = map[uint32]int64{}
	pending := map[uint32]int64{}
	r := bufio.NewReaderSize(io.NewSectionReader(db.wal, walHeaderSize, 1<<62), 1<<16)
	frame := make([]byte, frameHeaderSize+db.pageSize)
	for off := int64(walHeaderSize); ; off += int64(len(frame)) {
		if _, err := io.ReadFull(r, frame); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return fmt.Errorf("%s-wal: %w", db.path, err)
		}
		n, commit := binary.BigEndian.Uint32(frame), binary.BigEndian.Uint32(frame[4:])
		if n == 0 || [8]byte(frame[8:16]) != [8]byte(h[16:24]) {
			return nil
		}
		s0, s1 = walSum(big, frame[:8], s0, s1)
		s0, s1 = walSum(big, frame[frameHeaderSize:], s0, s1)
		if s0 != binary.BigEndian.Uint32(frame[16:]) || s1 != binary.BigEndian.Uint32(frame[20:]) {
			return nil
		}
		pending[n] = off + frameHeaderSize
		if commit != 0 {
			for p, at := range pending {
				db.frames[p] = at
			}
			clear(pending)
			db.pages = commit
		}
	}
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
