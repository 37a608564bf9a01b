package provider

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/url"
	"strconv"
)

// ListOptions pages a list endpoint.
type ListOptions struct {
	// Cursor is the nextCursor of the previous page ("" for the first).
	Cursor string
	// Limit is the page size, 1 to 100 (0: the server's default of 25).
	Limit int
}

func (o *ListOptions) query(q url.Values) (url.Values, error) {
	if q == nil {
		q = url.Values{}
	}
	if o == nil {
		return q, nil
	}
	if o.Limit != 0 {
		if o.Limit < 1 || o.Limit > 100 {
			return nil, ErrInvalidPageSize
		}
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q, nil
}

// list fetches one page of path whose items sit under key.
func list[T any](ctx context.Context, c *Client, path, key string, q url.Values, opts *ListOptions, ro []RequestOption) ([]*T, *Response, error) {
	q, err := opts.query(q)
	if err != nil {
		return nil, nil, err
	}
	req, err := c.newRequest("GET", path, nil, ro)
	if err != nil {
		return nil, nil, err
	}
	req.query = q
	var page struct {
		NextCursor string `json:"nextCursor"`
		HasMore    bool   `json:"hasMore"`
	}
	var items []*T
	resp, err := c.do(ctx, req, func(b []byte) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		if raw, ok := m[key]; ok {
			if err := json.Unmarshal(raw, &items); err != nil {
				return err
			}
		}
		return json.Unmarshal(b, &page)
	})
	if err != nil {
		return nil, resp, err
	}
	resp.NextCursor, resp.HasMore = page.NextCursor, page.HasMore
	if items == nil {
		items = []*T{}
	}
	return items, resp, nil
}

// errCursorLoop guards against a server that says hasMore without moving on.
var errCursorLoop = errors.New("provider: list says hasMore but gave no new nextCursor")

// iterate yields every item of every page, starting at opts.Cursor, until a
// page says hasMore false. An error is yielded once and ends the sequence.
func iterate[T any](ctx context.Context, opts *ListOptions, page func(context.Context, *ListOptions) ([]*T, *Response, error)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		o := ListOptions{}
		if opts != nil {
			o = *opts
		}
		for {
			items, resp, err := page(ctx, &o)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if !resp.HasMore {
				return
			}
			if resp.NextCursor == "" || resp.NextCursor == o.Cursor {
				yield(nil, errCursorLoop)
				return
			}
			o.Cursor = resp.NextCursor
		}
	}
}
