package support

import (
	"context"
)

// PlainOrderStatus is getOrderStatus's result read from the database
// without the cache, for the differential tests.
func (s *Service) PlainOrderStatus(ctx context.Context, id string) (any, error) {
	return s.readOrder(ctx, id)
}

// OrderCacheEnabled reports whether getOrderStatus caches its look-ups
// (known once it has run).
func (s *Service) OrderCacheEnabled() bool { return s.orders != nil && s.orders.watch != nil }
