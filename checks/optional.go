package checks

// Optional marks a requirement a node can do without: the engine waits for
// it, hands its value over when it has one, and runs the node either way.
// node-local-dns needs it: its direct probe of the node's DNS must run in a
// job pod where no kubeconfig reaches the API.
func Optional(n Node) Node { return optional{n} }

type optional struct{ n Node }

func (o optional) NodeID() string       { return o.n.NodeID() }
func (o optional) requirements() []Node { return o.n.requirements() }
func (o optional) declared() []*Setting { return o.n.declared() }

// unwrap returns the node behind an Optional or a Gate, with a Ref
// resolved to the catalog's check, and whether it was an Optional. A Ref
// the catalog does not hold stays itself (Validate reports it).
func (cat catalog) unwrap(n Node) (Node, bool) {
	opt := false
	switch o := n.(type) {
	case optional:
		n, opt = o.n, true
	case gate:
		n = o.n
	}
	if r, ok := n.(ref); ok && cat[string(r)] != nil {
		n = cat[string(r)]
	}
	return n, opt
}

// Has reports whether an optional requirement produced a value for this
// pass (a required one always has, or the node would not run).
func (p *Pass) Has(n Node) bool {
	n, _ = p.cat.unwrap(n)
	v, ok := p.values[n]
	return ok && v != nil
}
