// Package sqlitefile reads the rows of a SQLite database's tables,
// read-only and without SQLite: the database file format
// (sqlite.org/fileformat2.html), its write-ahead log included. It reads
// what skillsync needs from another program's database (OpenCode's
// sessions) and no more: the tables of sqlite_schema with their columns,
// and their rows in rowid order. No SQL, no indexes, no WITHOUT ROWID
// tables, UTF-8 text only.
//
// It takes no lock: the program that owns the database may write while it
// is read. Open takes a snapshot (the last transaction committed in the
// log when the log is scanned); Changed tells afterwards whether the
// database file or its log was rewritten meanwhile, which would make what
// was read a mix of two states. A caller reads again, or later.
//
// Every file is hostile until checked: a page out of range, a cell out of
// its page, a cycle among pages or a chain of overflow pages longer than
// the database is an error that wraps ErrMalformed and names the page.
package sqlitefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"time"

	"github.com/skillsync/skillsync/internal/platform"
)

// ErrNotSQLite is the error of a file that does not begin as a SQLite
// database does.
var ErrNotSQLite = errors.New("not a SQLite database")

// ErrMalformed is wrapped by the error of a database whose pages do not
// hold what the file format says they do.
var ErrMalformed = errors.New("malformed database")

// magic begins every SQLite database file.
var magic = []byte("SQLite format 3\x00")

const headerSize = 100

// DB is a database open for reading.
type DB struct {
	path     string
	f        *os.File
	wal      *os.File // nil without a log
	pageSize int
	usable   int    // a page's bytes less the reserved space at its end
	pages    uint32 // the database's size in pages, in the snapshot read

	// frames maps a page to the offset in the log of its data in the
	// newest committed frame that holds it.
	frames    map[uint32]int64
	walHeader [walHeaderSize]byte
	walEnd    walPos // after the last frame committed in the snapshot
	walMode   bool

	// sums are the CRC-32 of each page read from the database file rather
	// than the log: those a checkpoint during the read could have changed.
	// A page rewritten since has another.
	sums map[uint32]uint32
	// whole holds a page read whole for its checksum when a part of it
	// was asked for.
	whole []byte

	size    int64 // the database file's size, time and change counter when opened
	mtime   time.Time
	counter [4]byte
}

// Open opens the database at path (not following a link) and its log
// (path + "-wal") when the database is in WAL mode and the log is there.
func Open(path string) (*DB, error) {
	f, err := platform.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	db := &DB{path: path, f: f, sums: map[uint32]uint32{}}
	if err := db.open(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the database and its log.
func (db *DB) Close() error {
	err := db.f.Close()
	if db.wal != nil {
		err = errors.Join(err, db.wal.Close())
	}
	return err
}

func (db *DB) open() error {
	info, err := db.f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	db.size, db.mtime = info.Size(), info.ModTime()
	var h [headerSize]byte
	if _, err := db.f.ReadAt(h[:], 0); err != nil || !bytes.HasPrefix(h[:], magic) {
		return ErrNotSQLite
	}
	ps := int(binary.BigEndian.Uint16(h[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return fmt.Errorf("%w: page size %d", ErrMalformed, ps)
	}
	db.pageSize = ps
	db.usable = ps - int(h[20])
	if db.usable < 480 {
		return fmt.Errorf("%w: %d bytes reserved in a page of %d", ErrMalformed, h[20], ps)
	}
	if h[21] != 64 || h[22] != 32 || h[23] != 32 {
		return fmt.Errorf("%w: payload fractions %d, %d, %d", ErrMalformed, h[21], h[22], h[23])
	}
	if enc := binary.BigEndian.Uint32(h[56:]); enc > 1 {
		return fmt.Errorf("text encoding %d (UTF-16): only UTF-8 databases are read", enc)
	}
	// The size in the header holds when the header was written by a
	// release that keeps it (the version it is valid for is the change
	// counter); else it is the file's.
	db.pages = uint32(min(db.size/int64(ps), 1<<32-1))
	if n := binary.BigEndian.Uint32(h[28:]); n != 0 && binary.BigEndian.Uint32(h[92:]) == binary.BigEndian.Uint32(h[24:]) {
		db.pages = n
	}
	db.counter = [4]byte(h[24:28])
	if h[18] == 2 || h[19] == 2 {
		db.walMode = true
		return db.openWAL()
	}
	return nil
}

// openWAL reads the log beside a database in WAL mode, if there is one.
func (db *DB) openWAL() error {
	w, err := platform.OpenFile(db.path+"-wal", os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	db.wal = w
	info, err := w.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s-wal: not a regular file", db.path)
	}
	return db.scanWAL()
}

// Changed reports whether what was read since Open may mix two states
// of the database, because its owner wrote the database file meanwhile:
// the file's size, time or change counter moved (a transaction in a
// database without a log), the log was replaced or began again, or a
// transaction committed to the log after the snapshot wrote a page that
// was read from the database file (a checkpoint may have copied it
// there). Transactions added to the log change nothing else that was
// read: the snapshot's pages come from its frames.
func (db *DB) Changed() bool {
	info, err := os.Lstat(db.path)
	if err != nil || info.Size() != db.size || !info.ModTime().Equal(db.mtime) {
		return true
	}
	var c [4]byte
	if _, err := db.f.ReadAt(c[:], 24); err != nil || c != db.counter {
		return true
	}
	// A page read from the file and rewritten since (a checkpoint in the
	// same tick of the file's clock, a log gone or begun again since).
	buf := make([]byte, db.pageSize)
	for n, sum := range db.sums {
		if _, err := db.f.ReadAt(buf, int64(n-1)*int64(db.pageSize)); err != nil || crc32.ChecksumIEEE(buf) != sum {
			return true
		}
	}
	if !db.walMode {
		return false
	}
	wal, err := os.Lstat(db.path + "-wal")
	if db.wal == nil {
		if err != nil {
			return !errors.Is(err, os.ErrNotExist)
		}
		// A log begun since Open: read it as it is now.
		w, err := platform.OpenFile(db.path+"-wal", os.O_RDONLY, 0)
		if err != nil {
			return true
		}
		defer w.Close()
		var h [walHeaderSize]byte
		start, ok, err := db.walStart(w, h[:])
		return err != nil || ok && db.committedOver(w, start)
	}
	if err == nil {
		if mine, serr := db.wal.Stat(); serr != nil || !os.SameFile(wal, mine) {
			return true
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return true
	}
	// The log this snapshot read, still open even when its owner has
	// removed it since.
	var h [walHeaderSize]byte
	if _, err := db.wal.ReadAt(h[:], 0); err != nil {
		return db.walHeader != [walHeaderSize]byte{}
	}
	if h != db.walHeader {
		return true
	}
	return db.frames != nil && db.committedOver(db.wal, db.walEnd)
}

// page reads the first len(buf) bytes (at most a page) of page n of the
// snapshot: from the log when a committed frame holds it, else from the
// database file.
func (db *DB) page(n uint32, buf []byte) error {
	if n == 0 || n > db.pages {
		return fmt.Errorf("%w: page %d, of %d", ErrMalformed, n, db.pages)
	}
	var err error
	if at, ok := db.frames[n]; ok {
		_, err = db.wal.ReadAt(buf, at)
	} else {
		err = db.readFile(n, buf)
	}
	if err != nil {
		return fmt.Errorf("%w: page %d: %v", ErrMalformed, n, err)
	}
	return nil
}

// readFile reads the first len(buf) bytes of page n from the database
// file. The first read of a page reads all of it, for its checksum.
func (db *DB) readFile(n uint32, buf []byte) error {
	at := int64(n-1) * int64(db.pageSize)
	if _, seen := db.sums[n]; seen {
		_, err := db.f.ReadAt(buf, at)
		return err
	}
	page := buf
	if len(buf) != db.pageSize {
		if db.whole == nil {
			db.whole = make([]byte, db.pageSize)
		}
		page = db.whole
	}
	if _, err := db.f.ReadAt(page, at); err != nil {
		return err
	}
	db.sums[n] = crc32.ChecksumIEEE(page)
	copy(buf, page)
	return nil
}

func malformed(page uint32, format string, args ...any) error {
	return fmt.Errorf("%w: page %d: %s", ErrMalformed, page, fmt.Sprintf(format, args...))
}
