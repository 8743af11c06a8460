package checks

// Optional marks a requirement a node can do without: the engine waits for
// it, hands its value over when it has one, and runs the node either way.
// node-local-dns needs it: its direct probe of the node's DNS must run in a
// job pod where no kubeconfig reaches the API.
func Optional(n Node) Node { return optional{n} }

type optional struct{ n Node }

func (o optional) NodeID() string       { return o.n.NodeID() }
func (o optional) requirements() []Node { return o.n.requirements() }

// unwrap returns the node behind an Optional or a Gate, and whether it was
// an Optional.
func unwrap(n Node) (Node, bool) {
	switch o := n.(type) {
	case optional:
		return o.n, true
	case gate:
		return o.n, false
	}
	return n, false
}

// Has reports whether an optional requirement produced a value for this
// pass (a required one always has, or the node would not run).
func (p *Pass) Has(n Node) bool {
	n, _ = unwrap(n)
	v, ok := p.values[n]
	return ok && v != nil
}
