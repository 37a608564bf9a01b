package provider

import (
	"context"
	"iter"
	"time"
)

// LimitGroupsService manages limit groups and their members.
type LimitGroupsService service

// LimitGroup is the latest version of a limit group.
type LimitGroup struct {
	GroupID     string `json:"groupID"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Currency    string `json:"currency"`
	Limits
	// VersionID is sent back as ExpectedVersionID on the next update.
	VersionID  string     `json:"versionID"`
	CreatedOn  time.Time  `json:"createdOn"`
	DisabledOn *time.Time `json:"disabledOn,omitempty"`
}

// LimitGroupCreateRequest creates a limit group; Name is required.
type LimitGroupCreateRequest struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Limits
}

// LimitGroupUpdate patches a limit group. Absent fields stay, Null clears
// (Name and Description to empty, dimensions to inherit), Value sets.
type LimitGroupUpdate struct {
	Name        Field[string] `json:"name,omitempty"`
	Description Field[string] `json:"description,omitempty"`
	LimitsUpdate
	// ExpectedVersionID is the VersionID last read; a stale one fails with
	// ErrVersionConflict.
	ExpectedVersionID string `json:"expectedVersionID,omitempty"`
}

// Member is a participant's membership of a limit group.
type Member struct {
	ExternalID string    `json:"externalID"`
	AddedOn    time.Time `json:"addedOn"`
}

// List returns one page of limit groups.
func (s *LimitGroupsService) List(ctx context.Context, opts *ListOptions, ro ...RequestOption) ([]*LimitGroup, *Response, error) {
	path, err := s.client.providerPath("limit-groups")
	if err != nil {
		return nil, nil, err
	}
	return list[LimitGroup](ctx, s.client, path, "groups", nil, opts, ro)
}

// ListIter iterates over every limit group, page after page.
func (s *LimitGroupsService) ListIter(ctx context.Context, opts *ListOptions, ro ...RequestOption) iter.Seq2[*LimitGroup, error] {
	return iterate(ctx, opts, func(ctx context.Context, o *ListOptions) ([]*LimitGroup, *Response, error) {
		return s.List(ctx, o, ro...)
	})
}

// Create creates a limit group.
func (s *LimitGroupsService) Create(ctx context.Context, body *LimitGroupCreateRequest, opts ...RequestOption) (*LimitGroup, *Response, error) {
	return s.send(ctx, "POST", body, opts)
}

// Update patches a limit group.
func (s *LimitGroupsService) Update(ctx context.Context, groupID string, body *LimitGroupUpdate, opts ...RequestOption) (*LimitGroup, *Response, error) {
	return s.send(ctx, "PATCH", body, opts, groupID)
}

func (s *LimitGroupsService) send(ctx context.Context, method string, body any, opts []RequestOption, groupID ...string) (*LimitGroup, *Response, error) {
	path, err := s.client.providerPath(append([]string{"limit-groups"}, groupID...)...)
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest(method, path, body, opts)
	if err != nil {
		return nil, nil, err
	}
	g := new(LimitGroup)
	resp, err := s.client.do(ctx, req, wrapped("group", g))
	if err != nil {
		return nil, resp, err
	}
	return g, resp, nil
}

// ListMembers returns one page of a group's members.
func (s *LimitGroupsService) ListMembers(ctx context.Context, groupID string, opts *ListOptions, ro ...RequestOption) ([]*Member, *Response, error) {
	path, err := s.client.providerPath("limit-groups", groupID, "members")
	if err != nil {
		return nil, nil, err
	}
	return list[Member](ctx, s.client, path, "members", nil, opts, ro)
}

// ListMembersIter iterates over every member of a group.
func (s *LimitGroupsService) ListMembersIter(ctx context.Context, groupID string, opts *ListOptions, ro ...RequestOption) iter.Seq2[*Member, error] {
	return iterate(ctx, opts, func(ctx context.Context, o *ListOptions) ([]*Member, *Response, error) {
		return s.ListMembers(ctx, groupID, o, ro...)
	})
}

// AddMember puts a participant (participantID or externalID) in a group; an
// existing membership is returned unchanged.
func (s *LimitGroupsService) AddMember(ctx context.Context, groupID, participant string, opts ...RequestOption) (*Member, *Response, error) {
	path, err := s.client.providerPath("limit-groups", groupID, "members", participant)
	if err != nil {
		return nil, nil, err
	}
	req, err := s.client.newRequest("PUT", path, nil, opts)
	if err != nil {
		return nil, nil, err
	}
	m := new(Member)
	resp, err := s.client.do(ctx, req, wrapped("member", m))
	if err != nil {
		return nil, resp, err
	}
	return m, resp, nil
}

// RemoveMember takes a participant out of a group; removing a non-member
// succeeds too.
func (s *LimitGroupsService) RemoveMember(ctx context.Context, groupID, participant string, opts ...RequestOption) (*Response, error) {
	path, err := s.client.providerPath("limit-groups", groupID, "members", participant)
	if err != nil {
		return nil, err
	}
	req, err := s.client.newRequest("DELETE", path, nil, opts)
	if err != nil {
		return nil, err
	}
	return s.client.do(ctx, req, nil)
}
