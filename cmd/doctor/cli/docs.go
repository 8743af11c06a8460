package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/report"
)

// A check's documentation is `doctor explain ID` on every host: the binary
// carries it. A site that publishes the docs (an internal wiki, the
// project's pages) can be named with --docs-url or DOCTOR_DOCS_URL; every
// finding then points at that page, and JSON's docs holds the link.

// docsEnv is the environment variable --docs-url defaults to.
const docsEnv = "DOCTOR_DOCS_URL"

func docsFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "docs-url", "", "link each check's documentation to `URL`#ID (or URL with {id} replaced) instead of naming doctor explain ID (default: $"+docsEnv+")")
}

// docsURL is the given --docs-url, else $DOCTOR_DOCS_URL; "" when neither.
func (a *app) docsURL(flag string) string {
	if flag != "" {
		return flag
	}
	if a.io.Getenv == nil {
		return ""
	}
	return strings.TrimSpace(a.io.Getenv(docsEnv))
}

// docsLink is a check's page under base: {id} replaced, else #ID added.
func docsLink(base, id string) string {
	if strings.Contains(base, "{id}") {
		return strings.ReplaceAll(base, "{id}", id)
	}
	return base + "#" + id
}

// linkDocs points every finding of rep at base's page for its check; an
// empty base leaves them as they are.
func linkDocs(rep *report.Report, base string) {
	if base == "" {
		return
	}
	for i := range rep.Findings {
		rep.Findings[i].Docs = docsLink(base, rep.Findings[i].Check)
	}
}
