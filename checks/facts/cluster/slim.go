package cluster

// What a list keeps of its objects is what their kind keeps (keep.Kinds):
// the answers are cut to the fields some check reads before client-go
// decodes them, so managedFields, a node's image list and the like are
// never decoded, on a live run and on analyze alike.

// appendPage adds a page to a list: the first page is the list, not a copy
// of it (a page of 500 pods is half a megabyte of structs).
func appendPage[T any](to, page []T) []T {
	if to == nil {
		return page
	}
	return append(to, page...)
}
