package reconciliation

// SetPage sets how many customers r compares at a time (customersPage
// otherwise): tests spread a few owners over many pages.
func SetPage(r *Reconciler, n int) { r.page = n }
