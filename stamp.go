package skillsync

import (
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/skillsync/skillsync/materialize"
)

// Stamp returns a value that changes whenever the catalog may have
// changed: a sync rewrote the cache's manifest, or a skill directory of a
// layer read in place came, went or changed its SKILL.md. A server
// re-reads the catalog when the stamp moves. Dot files are left out: the
// usage file changes with every use and says nothing about the catalog.
// It costs two stats per local skill.
func (e *Engine) Stamp() (string, error) {
	h := fnv.New64a()
	buf := stampFile(make([]byte, 0, 512), filepath.Join(e.layout.CacheDir(), materialize.ManifestName))
	for _, l := range e.localLayers() {
		entries, err := os.ReadDir(l.dir)
		if err != nil {
			buf = append(buf, l.dir...)
			buf = append(buf, " -\n"...)
			continue
		}
		for _, en := range entries {
			if strings.HasPrefix(en.Name(), ".") {
				continue
			}
			p := filepath.Join(l.dir, en.Name())
			buf = stampFile(buf, p)
			buf = stampFile(buf, filepath.Join(p, "SKILL.md"))
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return strconv.FormatUint(h.Sum64(), 16), nil
}

// stampFile appends p's size and modification time to buf, or a dash when
// p cannot be read.
func stampFile(buf []byte, p string) []byte {
	buf = append(buf, p...)
	info, err := os.Stat(p)
	if err != nil {
		return append(buf, " -\n"...)
	}
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, info.Size(), 10)
	buf = append(buf, ' ')
	buf = strconv.AppendInt(buf, info.ModTime().UnixNano(), 10)
	return append(buf, '\n')
}
