package runnerversion

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/hostio/atomicfile"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

const (
	versionVar  = Module + "/common.VERSION"
	revisionVar = Module + "/common.REVISION"

	// MaxScan bounds what the stripped-binary scan reads, .rodata and the
	// data sections together.
	MaxScan = 256 << 20
	// scanChunk is what one read brings into memory.
	scanChunk = 1 << 20
	// maxSymtab bounds .symtab plus .strtab, which debug/elf loads whole.
	maxSymtab = 128 << 20
	// maxStamp bounds a stamped string's length.
	maxStamp = 256
)

// stampShape is what ci/version prints: "19.3.0", "19.3.0-rc1",
// "19.4.0~pre.12.gd79f3e7b".
var stampShape = lazyre.MustCompile(`^\d{1,4}\.\d{1,4}\.\d{1,4}(?:-rc\d{1,4}|~pre\.\d{1,7}\.g[0-9a-f]{8})?$`)

// FromBinary reads the version of a gitlab-runner binary at hostPath under
// root WITHOUT executing it (see the package documentation for what it
// reads, in which order). root "" or "/" is the live host. Anything but a
// regular file is refused before it is opened, and the file is opened with
// O_NONBLOCK so that one swapped for a FIFO in between cannot block.
func FromBinary(root, hostPath string) (Version, error) {
	fail := func(err error) (Version, error) { return Version{}, &FileError{hostPath, err} }
	// Under a root its symlinks (/proc/<pid>/exe) resolve inside it.
	p, err := hostio.JoinInRoot(root, hostPath)
	if err != nil {
		return fail(hostio.FileCause(err))
	}

	st, err := os.Stat(p)
	if err != nil {
		return fail(hostio.FileCause(err))
	}
	if !st.Mode().IsRegular() {
		return fail(fmt.Errorf("%w (%s)", ErrNotRegular, modeName(st.Mode())))
	}
	f, err := atomicfile.OpenNonblock(p)
	if err != nil {
		return fail(hostio.FileCause(err))
	}
	defer f.Close()
	fst, err := f.Stat()
	if err != nil {
		return fail(hostio.FileCause(err))
	}
	if !fst.Mode().IsRegular() || !os.SameFile(st, fst) {
		return fail(fmt.Errorf("%w: changed while being opened", ErrNotRegular))
	}

	info, err := buildinfo.Read(f)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ErrNotGo, err))
	}
	var ldflags, vcsRevision string
	hasLdflags := false
	for _, s := range info.Settings {
		switch s.Key {
		case "-ldflags":
			ldflags, hasLdflags = s.Value, true
		case "vcs.revision":
			vcsRevision = s.Value
		}
	}
	revision := func(stamped string) string {
		// common/version.go: a stamped REVISION wins, else vcs.revision[:8].
		if stamped != "" {
			return stamped
		}
		if len(vcsRevision) >= 8 {
			return vcsRevision[:8]
		}
		return ""
	}
	isRunner := info.Main.Path == Module

	// 1. -ldflags, kept by builds without -trimpath.
	if hasLdflags {
		x := xFlags(ldflags)
		if v := x[versionVar]; v != "" {
			return Version{Version: v, Source: "buildinfo -ldflags of " + hostPath, Revision: revision(x[revisionVar])}, nil
		}
	}

	ef, elfErr := elf.NewFile(f)
	if elfErr == nil {
		// 2. The symbol table.
		v, found, err := symbolString(ef, versionVar)
		if err != nil {
			return fail(err)
		}
		if found && v != "" {
			rev, _, _ := symbolString(ef, revisionVar)
			return Version{Version: v, Source: "ELF symbol " + versionVar + " of " + hostPath, Revision: revision(rev)}, nil
		}
		// 3. A stripped binary: the bounded scan.
		if !found && isRunner && ef.Section(".symtab") == nil {
			vals, err := scanStamps(ef)
			if err != nil {
				return fail(err)
			}
			switch len(vals) {
			case 1:
				return Version{Version: vals[0], Source: "NUL-terminated -X string in .rodata of " + hostPath + " (no symbol table)", Revision: revision("")}, nil
			case 0:
			default:
				return fail(fmt.Errorf("%w: stripped binary with several version-like stamped strings %q", ErrNoVersion, vals))
			}
		}
	}

	// 4. The main module's version, the runner's own fallback.
	if mv := info.Main.Version; isRunner && mv != "" && mv != "(devel)" {
		if pseudoVersion().MatchString(mv) {
			// gitlab-runner's module path has no /v19 suffix, so Go cannot
			// take a v19 tag for it: a VCS build is stamped v0.0.0-<time>-<rev>.
			return fail(fmt.Errorf("%w: not stamped with -X %s=…, only the Go pseudo-version %s (revision %s)", ErrNoVersion, versionVar, mv, orUnknown(revision(""))))
		}
		return Version{Version: strings.TrimPrefix(mv, "v"), Source: "buildinfo main module version of " + hostPath, Revision: revision("")}, nil
	}
	if !isRunner && !strings.HasPrefix(info.Path, Module+"/") {
		return fail(fmt.Errorf("%w: a Go binary of %s, not gitlab-runner", ErrNoVersion, orUnknown(info.Path)))
	}
	return fail(fmt.Errorf("%w: built without -X %s=… and without a VCS version", ErrNoVersion, versionVar))
}

// pseudoVersion is a Go module pseudo-version (go.dev/ref/mod#pseudo-versions).
var pseudoVersion = lazyre.MustCompile(`^v\d+\.\d+\.\d+-(?:[0-9A-Za-z.-]+\.)?(?:0\.)?\d{14}-[0-9a-f]{12}(?:\+[0-9A-Za-z.-]+)?$`)

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return m.Type().String()
}

// xFlags returns the -X name=value pairs of a -ldflags value, split the way
// cmd/go splits it (spaces, with '…' or "…" quoting); the last one of a
// name wins, as in the linker.
func xFlags(ldflags string) map[string]string {
	args := splitQuoted(ldflags)
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := strings.TrimPrefix(args[i], "-")
		if !strings.HasPrefix(a, "-") {
			a = "-" + a
		}
		var v string
		switch {
		case a == "-X" && i+1 < len(args):
			i++
			v = args[i]
		case strings.HasPrefix(a, "-X="):
			v = a[len("-X="):]
		default:
			continue
		}
		if name, val, ok := strings.Cut(v, "="); ok {
			out[name] = val
		}
	}
	return out
}

// splitQuoted is cmd/internal/quoted.Split: fields separated by white space,
// a field may be quoted whole with ' or ".
func splitQuoted(s string) []string {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t\n\r")
		if s == "" {
			return out
		}
		if q := s[0]; q == '\'' || q == '"' {
			if i := strings.IndexByte(s[1:], q); i >= 0 {
				out = append(out, s[1:1+i])
				s = s[2+i:]
				continue
			}
		}
		i := strings.IndexAny(s, " \t\n\r")
		if i < 0 {
			return append(out, s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
}

// symbolString reads the Go string variable name through the ELF symbol
// table: found is false when there is no such symbol (or no table).
func symbolString(ef *elf.File, name string) (value string, found bool, err error) {
	symtab, strtab := ef.Section(".symtab"), ef.Section(".strtab")
	if symtab == nil || strtab == nil {
		return "", false, nil
	}
	if symtab.Size+strtab.Size > maxSymtab {
		return "", false, fmt.Errorf("symbol table of %d MiB, over the %d MiB read limit", (symtab.Size+strtab.Size)>>20, maxSymtab>>20)
	}
	syms, err := ef.Symbols()
	if err != nil {
		return "", false, fmt.Errorf("reading the ELF symbol table: %w", err)
	}
	ptr := ptrSize(ef)
	for _, s := range syms {
		if s.Name != name {
			continue
		}
		hdr, err := readVA(ef, s.Value, 2*ptr)
		if err != nil {
			return "", true, fmt.Errorf("%s: %w", name, err)
		}
		data, n := word(ef, hdr[:ptr]), word(ef, hdr[ptr:])
		if n == 0 {
			return "", true, nil
		}
		if n > maxStamp {
			return "", true, fmt.Errorf("%s: %d bytes long, not a version", name, n)
		}
		b, err := readVA(ef, data, int(n))
		if err != nil {
			return "", true, fmt.Errorf("%s: %w", name, err)
		}
		return string(b), true, nil
	}
	return "", false, nil
}

func ptrSize(ef *elf.File) int {
	if ef.Class == elf.ELFCLASS32 {
		return 4
	}
	return 8
}

func word(ef *elf.File, b []byte) uint64 {
	if len(b) == 4 {
		return uint64(ef.ByteOrder.Uint32(b))
	}
	return ef.ByteOrder.Uint64(b)
}

func putWord(ef *elf.File, b []byte, v uint64) {
	if len(b) == 4 {
		ef.ByteOrder.PutUint32(b, uint32(v))
	} else {
		ef.ByteOrder.PutUint64(b, v)
	}
}

// readVA reads n bytes at virtual address va from the section holding it;
// in .bss or .noptrbss (a variable left at its zero value) they are zeros.
func readVA(ef *elf.File, va uint64, n int) ([]byte, error) {
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_COMPRESSED != 0 {
			continue
		}
		if va >= s.Addr && va+uint64(n) <= s.Addr+s.Size {
			b := make([]byte, n)
			if s.Type == elf.SHT_NOBITS {
				return b, nil
			}
			if _, err := s.ReadAt(b, int64(va-s.Addr)); err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("address %#x is in no section with file data", va)
}

// scanStamps looks in .rodata for NUL-terminated strings of the shape
// ci/version prints and returns the distinct values among them that a
// string header in .data or .noptrdata points at, sorted.
func scanStamps(ef *elf.File) ([]string, error) {
	ro := ef.Section(".rodata")
	if ro == nil || ro.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	budget := int64(MaxScan)
	type cand struct {
		va  uint64
		val string
	}
	var cands []cand
	// A stamp is at most maxStamp bytes before its NUL: each chunk comes
	// with that many bytes ahead of it, and a string counts in the chunk
	// that holds its NUL.
	err := scanSection(ro, &budget, maxStamp, 0, func(base int64, b []byte, lo, hi int) {
		for j := lo; j < hi; j++ {
			k := bytes.IndexByte(b[j:hi], 0)
			if k < 0 {
				return
			}
			j += k
			i := j
			for i > 0 && j-i < maxStamp && stampByte(b[i-1]) {
				i--
			}
			s := b[i:j]
			// The bytes before a stamp belong to whatever the linker put
			// there: try each start.
			for n := 0; n+5 <= len(s); n++ {
				if (n == 0 || !isDigit(s[n-1])) && stampShape().Match(s[n:]) {
					cands = append(cands, cand{ro.Addr + uint64(base) + uint64(i+n), string(s[n:])})
					break
				}
			}
		}
	})
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	if len(cands) > 10000 {
		return nil, fmt.Errorf("%d version-like strings in .rodata, too many to judge", len(cands))
	}
	ptr := ptrSize(ef)
	headers := map[string]string{}
	for _, c := range cands {
		h := make([]byte, 2*ptr)
		putWord(ef, h[:ptr], c.va)
		putWord(ef, h[ptr:], uint64(len(c.val)))
		headers[string(h)] = c.val
	}
	found := map[string]bool{}
	for _, name := range []string{".data", ".noptrdata"} {
		s := ef.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			continue
		}
		err := scanSection(s, &budget, 0, 2*ptr, func(base int64, b []byte, lo, hi int) {
			// Go aligns string headers to the pointer size, and sections
			// start aligned.
			for i := lo; i < hi && i+2*ptr <= len(b); i++ {
				if (uint64(base)+uint64(i))%uint64(ptr) != 0 {
					continue
				}
				if v, ok := headers[string(b[i:i+2*ptr])]; ok {
					found[v] = true
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	var out []string
	for v := range found {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// stampByte is a byte ci/version's output can hold.
func stampByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c == '.' || c == '~' || c == '-'
}

// scanSection hands fn the section scanChunk bytes at a time, with up to
// before bytes ahead of them and after bytes behind them: b starts at
// section offset base and the chunk proper is b[lo:hi]. Every byte it reads,
// overlaps included, is charged to budget; it fails before a read that
// would overrun it.
func scanSection(s *elf.Section, budget *int64, before, after int, fn func(base int64, b []byte, lo, hi int)) error {
	r := s.Open()
	size := int64(s.Size)
	buf := make([]byte, before+scanChunk+after)
	for off := int64(0); off < size; off += scanChunk {
		base := max(off-int64(before), 0)
		end := min(off+scanChunk+int64(after), size)
		own := min(int64(scanChunk), size-off)
		if *budget < end-base {
			return fmt.Errorf("scan stopped at its %d MiB read limit", MaxScan>>20)
		}
		*budget -= end - base
		b := buf[:end-base]
		if _, err := r.Seek(base, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("reading %s: %w", s.Name, err)
		}
		lo := int(off - base)
		fn(base, b, lo, lo+int(own))
	}
	return nil
}
