package metrics

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/text/safetext"
)

// gauge is one metric family of gauges, written in Prometheus's text
// exposition format (version 0.0.4). It is the part of client_golang's
// GaugeVec and expfmt.MetricFamilyToText that a textfile needs: importing
// client_golang costs every doctor run its package initialisation (the
// default registry's process and Go collectors, procfs, protobuf), about
// 2 ms of a 40 ms healthy run, for a file only --textfile writes. The
// tests parse what this writes with expfmt's own parser and lint it with
// client_golang's promlint.
type gauge struct {
	name, help string
	labels     []string
	series     map[string]*sample // by the escaped label values
}

type sample struct {
	values []string
	value  float64
}

func newGauge(name, help string, labels ...string) *gauge {
	return &gauge{name: name, help: help, labels: labels, series: map[string]*sample{}}
}

// at finds or makes the series of these label values (one per label).
// A value is the outside's (a runner's name from config.toml, a
// certificate's subject): it is kept as safetext.Line shows it, so the file
// holds no control character for a reader's terminal and is valid UTF-8,
// which the collector requires of the whole file (client_golang's registry
// refuses to write one invalid byte). Two values that print the same are
// one series: two would be a duplicate the collector refuses.
func (g *gauge) at(values []string) *sample {
	if len(values) != len(g.labels) {
		panic("metrics: " + g.name + " has labels " + strings.Join(g.labels, ",")) // a programming error
	}
	fit := make([]string, len(values))
	for i, v := range values {
		fit[i] = safetext.Line(v)
	}
	values = fit
	k := strings.Join(values, "\xff")
	s, ok := g.series[k]
	if !ok {
		s = &sample{values: values}
		g.series[k] = s
	}
	return s
}

func (g *gauge) set(v float64, values ...string) { g.at(values).value = v }
func (g *gauge) add(v float64, values ...string) { g.at(values).value += v }

// writeTo writes the family as client_golang's Gather and expfmt write it:
// HELP, TYPE, then each series with its labels sorted by name, the series
// sorted by those label values (prometheus/registry.go and
// internal/metric.go, client_golang v1.24.1). A family with no series
// writes nothing, as a GaugeVec with no children gathers nothing.
func (g *gauge) writeTo(b *bytes.Buffer) {
	if len(g.series) == 0 {
		return
	}
	b.WriteString("# HELP " + g.name + " " + escapeHelp(g.help) + "\n")
	b.WriteString("# TYPE " + g.name + " gauge\n")
	byName := make([]int, len(g.labels)) // label positions, by label name
	for i := range byName {
		byName[i] = i
	}
	sort.Slice(byName, func(i, j int) bool { return g.labels[byName[i]] < g.labels[byName[j]] })
	ss := make([]*sample, 0, len(g.series))
	for _, s := range g.series {
		ss = append(ss, s)
	}
	sort.Slice(ss, func(i, j int) bool {
		for _, k := range byName {
			if a, c := ss[i].values[k], ss[j].values[k]; a != c {
				return a < c
			}
		}
		return false
	})
	for _, s := range ss {
		b.WriteString(g.name)
		if len(byName) > 0 {
			b.WriteByte('{')
			for n, k := range byName {
				if n > 0 {
					b.WriteByte(',')
				}
				b.WriteString(g.labels[k] + `="` + escapeLabel(s.values[k]) + `"`)
			}
			b.WriteByte('}')
		}
		b.WriteString(" " + formatValue(s.value) + "\n")
	}
}

// The escapes of expfmt's text format (expfmt/text_create.go,
// prometheus/common v0.71.0):
// help text escapes backslash and newline; label values also the double quote.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// escapeLabel escapes a value at made fit.
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// formatValue writes a float as expfmt's writeFloat does: +Inf, -Inf, NaN,
// else the shortest 'g' form.
func formatValue(f float64) string {
	switch {
	case f == 1:
		return "1"
	case f == 0:
		return "0"
	case f == -1:
		return "-1"
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, +1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
