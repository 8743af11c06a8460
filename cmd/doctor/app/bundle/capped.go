package bundle

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// A bundle Write makes is one Read accepts: Read refuses more than
// maxEntries entries, maxMeta bytes of tape.json or report.json, more than
// hostio.MaxFileSize of one file and maxTotal in all (a bundle is hostile
// input to analyze). So Write caps what it keeps by the same bounds, the
// largest records first, and says in the manifest what it left out: analyze
// then answers those requests and files as the live run's absent ones
// ("not recorded in the bundle"), and the reader of the bundle knows why.

// tapeParts is what tape.json holds, redacted.
type tapeParts struct {
	Files  map[string]*hostio.FileRecord   `json:"files"`
	Probes map[string]*hostio.ProbeRecord  `json:"probes"`
	HTTP   map[string][]*hostio.HTTPRecord `json:"http"`
}

// fixedEntries are the entries every bundle has besides root/: README.txt,
// manifest.json, report.json, tape.json.
const fixedEntries = 4

// capTape drops what the bounds leave no room for, from t and from report
// (which it may replace), and returns what it left out, described.
func capTape(t *tapeParts, report *[]byte) []string {
	var notes []string
	// Each file's content is one entry and must fit the per-file bound.
	var read []string
	for p, r := range t.Files {
		if !r.Read {
			continue
		}
		if len(r.Content) > hostio.MaxFileSize {
			notes = append(notes, fmt.Sprintf("the content of %s (%d bytes, over the bound of one file)", p, len(r.Content)))
			leaveOut(r)
			continue
		}
		read = append(read, p)
	}
	// Largest first, then by name: what is left out is the same every time.
	sort.Slice(read, func(i, j int) bool {
		a, b := len(t.Files[read[i]].Content), len(t.Files[read[j]].Content)
		return a > b || a == b && read[i] < read[j]
	})
	if excess := fixedEntries + len(read) - maxEntries; excess > 0 {
		notes = append(notes, fmt.Sprintf("the content of %d files, the largest, over the bound of %d entries", excess, maxEntries))
		for _, p := range read[:excess] {
			leaveOut(t.Files[p])
		}
		read = read[excess:]
	}
	if len(*report) > maxMeta {
		notes = append(notes, fmt.Sprintf("report.json (%d bytes, over the bound of %d)", len(*report), maxMeta))
		*report = []byte(`{"note": "the report was larger than a bundle holds; doctor analyze makes it again"}`)
	}
	notes = append(notes, capMeta(t)...)
	// What remains must fit the total: the files' contents go first.
	total := len(*report) + metaSize(t) + len(readme)
	for _, p := range read {
		total += len(t.Files[p].Content)
	}
	var dropped, bytes int
	for _, p := range read {
		if total <= maxTotal-metaSlack {
			break
		}
		n := len(t.Files[p].Content)
		leaveOut(t.Files[p])
		total -= n
		dropped, bytes = dropped+1, bytes+n
	}
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("the content of %d files (%d bytes), over the bound of %d MiB in all", dropped, bytes, maxTotal>>20))
	}
	return notes
}

// capWork leaves out the API answers analyze would refuse to read
// (overBounds): an answer a live run's cut passed can still meet a bound
// once redacted (a stand-in is longer than a short password), and every
// bundle Write makes must be one Read accepts.
func capWork(t *tapeParts) []string {
	var notes []string
	for range 64 {
		key, err := overBounds(t.HTTP)
		if err == nil {
			return notes
		}
		delete(t.HTTP, key)
		notes = append(notes, fmt.Sprintf("the API answers of one request, over a bound of what a run reads (%v)", err))
	}
	t.HTTP = nil
	return append(notes, "every API answer: too many were over the bounds of what a run reads")
}

// metaSlack is room left under maxTotal for the manifest.
const metaSlack = 1 << 20

// capMeta drops API answers, then probes, then file records, the largest
// first, until tape.json fits maxMeta. Sizes are measured per record and
// the whole measured again after each round, so it ends within a few.
func capMeta(t *tapeParts) []string {
	type item struct {
		key  string
		size int
	}
	dropped := map[string][2]int{} // what: count, bytes
	order := []string{"API answers", "probe results", "file records"}
	for round := 0; round < 8; round++ {
		size := metaSize(t)
		if size <= maxMeta {
			break
		}
		over := size - maxMeta*9/10
		for _, what := range order {
			var items []item
			switch what {
			case order[0]:
				for k, rs := range t.HTTP {
					items = append(items, item{k, jsonSize(rs) + len(k)})
				}
			case order[1]:
				for k, r := range t.Probes {
					items = append(items, item{k, jsonSize(r) + len(k)})
				}
			default:
				for k, r := range t.Files {
					items = append(items, item{k, jsonSize(r) + len(k)})
				}
			}
			sort.Slice(items, func(i, j int) bool {
				return items[i].size > items[j].size || items[i].size == items[j].size && items[i].key < items[j].key
			})
			for _, it := range items {
				if over <= 0 {
					break
				}
				switch what {
				case order[0]:
					delete(t.HTTP, it.key)
				case order[1]:
					delete(t.Probes, it.key)
				default:
					delete(t.Files, it.key)
				}
				over -= it.size
				d := dropped[what]
				dropped[what] = [2]int{d[0] + 1, d[1] + it.size}
			}
		}
	}
	var notes []string
	for _, what := range order {
		if d := dropped[what]; d[0] > 0 {
			notes = append(notes, fmt.Sprintf("%d %s (about %d bytes of tape.json), over the bound of %d MiB", d[0], what, d[1], maxMeta>>20))
		}
	}
	return notes
}

// leaveOut keeps a file's record without its content: replay answers its
// read as "not in the bundle".
func leaveOut(r *hostio.FileRecord) {
	r.Read, r.Content = false, nil
	r.Redacted = append(r.Redacted, "the content: left out by the bundle's bounds")
}

// metaSize is tape.json's size as Write encodes it.
func metaSize(t *tapeParts) int { return len(encodeTape(t)) }

func jsonSize(v any) int {
	b, err := json.MarshalIndent(v, "    ", "  ")
	if err != nil {
		return 0
	}
	return len(b)
}

// encodeTape is tape.json.
func encodeTape(t *tapeParts) []byte {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil
	}
	return b
}
