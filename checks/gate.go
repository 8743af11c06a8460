package checks

// Gate marks a requirement whose failure stops a node, as any requirement
// does, but which the node does not wait for before it starts: its result
// is only published once the gate has passed. It moves I/O earlier without
// changing the logic: the cluster lists need api-auth to have passed (a
// refused credential is diagnosed once, and the lists fold under it), but
// their requests go out with the self-review, in the same round trip,
// instead of one round trip after it.
//
// A gated node cannot read the gate's value (it has none yet), and a gate
// belongs in front of read-only work only: what the node did is thrown
// away when the gate fails, not undone.
func Gate(n Node) Node { return gate{n} }

type gate struct{ n Node }

func (g gate) NodeID() string       { return g.n.NodeID() }
func (g gate) requirements() []Node { return g.n.requirements() }
func (g gate) declared() []*Setting { return g.n.declared() }

// isGate says whether a requirement is a Gate.
func isGate(n Node) bool {
	_, ok := n.(gate)
	return ok
}

// Ref is the check of ID id as a requirement of a fact or of another
// check, neither of which imports a check (the layers test in checks/all):
// the cluster's reads gate on api-auth by its ID, Gate(Ref("api-auth")). Run resolves it in the catalog it is given, where
// it is that check in every respect (it is scheduled, it blocks, it is
// among RequiredChecks), and Validate rejects an ID the catalog lacks.
func Ref(id string) Node { return ref(id) }

type ref string

func (r ref) NodeID() string       { return string(r) }
func (r ref) requirements() []Node { return nil }
func (r ref) declared() []*Setting { return nil }

// catalog is the checks a Ref resolves to, by ID.
type catalog map[string]*Check

func catalogOf(cs []*Check) catalog {
	cat := catalog{}
	for _, c := range cs {
		cat[c.ID] = c
	}
	return cat
}
