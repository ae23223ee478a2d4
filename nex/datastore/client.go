package datastore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"

	ds "github.com/gamewire/gamewire/nex/protocols/datastore"
	"github.com/gamewire/gamewire/nex/types"
)

// Caller makes RMC calls; *rmc.Client is one (a logged-in session's RMC).
type Caller interface {
	Call(ctx context.Context, protocol uint16, method uint32, params []byte) ([]byte, error)
	Settings() types.Settings
}

// Client calls the DataStore protocol of a server and moves bodies over HTTP.
type Client struct {
	C Caller
	// NEXVersion as in Server.NEXVersion; 0 derives it from the settings.
	NEXVersion int
	// HTTP carries bodies; default http.DefaultClient.
	HTTP *http.Client
}

// proto is the generated DataStore client over C, with NEXVersion in its
// settings when C's carry none.
func (c *Client) proto() ds.DataStoreClient {
	if c.NEXVersion == 0 {
		return ds.DataStoreClient{C: c.C}
	}
	return ds.DataStoreClient{C: versioned{c.C, types.Version(c.NEXVersion)}}
}

// versioned is a Caller whose settings carry a NEX version.
type versioned struct {
	Caller
	v types.Version
}

func (v versioned) Settings() types.Settings {
	s := v.Caller.Settings()
	if s.Version == 0 {
		s.Version = v.v
	}
	return s
}

// PreparePostObject asks where to upload a new object's body.
func (c *Client) PreparePostObject(ctx context.Context, p PreparePostParam) (ReqPostInfo, error) {
	info, err := c.proto().PreparePostObject(ctx, p.wire())
	return reqPostInfoFrom(info), err
}

// CompletePostObject ends a post.
func (c *Client) CompletePostObject(ctx context.Context, dataID uint64, success bool) error {
	return c.proto().CompletePostObject(ctx, ds.DataStoreCompletePostParam{DataID: dataID, Success: success})
}

// PrepareGetObject asks where to download an object's body.
func (c *Client) PrepareGetObject(ctx context.Context, p PrepareGetParam) (ReqGetInfo, error) {
	info, err := c.proto().PrepareGetObject(ctx, p.wire())
	return reqGetInfoFrom(info), err
}

// GetMeta reads an object's metadata.
func (c *Client) GetMeta(ctx context.Context, p GetMetaParam) (MetaInfo, error) {
	mi, err := c.proto().GetMeta(ctx, p.wire())
	return metaInfoFrom(mi), err
}

// SearchObject searches objects.
func (c *Client) SearchObject(ctx context.Context, p SearchParam) (SearchResult, error) {
	res, err := c.proto().SearchObject(ctx, p.wire())
	return searchResultFrom(res), err
}

// DeleteObject deletes an object.
func (c *Client) DeleteObject(ctx context.Context, dataID, updatePassword uint64) error {
	return c.proto().DeleteObject(ctx, ds.DataStoreDeleteParam{DataID: dataID, UpdatePassword: updatePassword})
}

// ChangeMeta changes an object's metadata.
func (c *Client) ChangeMeta(ctx context.Context, p ChangeMetaParam) error {
	return c.proto().ChangeMeta(ctx, p.wire())
}

// PrepareUpdateObject asks where to upload an object's next version.
func (c *Client) PrepareUpdateObject(ctx context.Context, dataID uint64, size uint32, updatePassword uint64) (ReqUpdateInfo, error) {
	info, err := c.proto().PrepareUpdateObject(ctx, ds.DataStorePrepareUpdateParam{DataID: dataID, Size: size, UpdatePassword: updatePassword})
	return reqUpdateInfoFrom(info), err
}

// CompleteUpdateObject ends an update.
func (c *Client) CompleteUpdateObject(ctx context.Context, dataID uint64, ver uint32, success bool) error {
	return c.proto().CompleteUpdateObject(ctx, ds.DataStoreCompleteUpdateParam{DataID: dataID, Version: ver, Success: success})
}

// RateObject rates an object in one slot and returns the slot's rating.
func (c *Client) RateObject(ctx context.Context, dataID uint64, slot int8, value int32, accessPassword uint64) (RatingInfo, error) {
	info, err := c.proto().RateObject(ctx, ds.DataStoreRatingTarget{DataID: dataID, Slot: slot},
		ds.DataStoreRateObjectParam{RatingValue: value, AccessPassword: accessPassword}, true)
	return ratingInfoFrom(info), err
}

// GetPasswordInfo returns an object's access and update passwords (owner only).
func (c *Client) GetPasswordInfo(ctx context.Context, dataID uint64) (access, update uint64, err error) {
	info, err := c.proto().GetPasswordInfo(ctx, dataID)
	return info.AccessPassword, info.UpdatePassword, err
}

// Upload sends a body where a prepare call said: a multipart/form-data POST
// of the form fields, then the body as the part "file".
func (c *Client) Upload(ctx context.Context, url string, fields []KeyValue, body []byte) error {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f.Key, f.Value); err != nil {
			return err
		}
	}
	fw, err := mw.CreateFormFile("file", "body")
	if err != nil {
		return err
	}
	if _, err := fw.Write(body); err != nil {
		return err
	}
	if err := mw.Close(); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &buf)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("datastore: upload: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("datastore: upload: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	return nil
}

// Download fetches a body from a PrepareGetObject URL, at most max bytes.
func (c *Client) Download(ctx context.Context, url string, max int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("datastore: download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("datastore: download: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("datastore: download: more than %d bytes", max)
	}
	return b, err
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// Put posts a new object: PreparePostObject, the body over HTTP,
// CompletePostObject. It returns the object's data id. p.PersistenceSlotID
// NoPersistenceSlot binds no slot (0 is a slot).
func (c *Client) Put(ctx context.Context, p PreparePostParam, body []byte) (uint64, error) {
	p.Size = uint32(len(body))
	info, err := c.PreparePostObject(ctx, p)
	if err != nil {
		return 0, err
	}
	if err := c.Upload(ctx, info.URL, info.FormFields, body); err != nil {
		_ = c.CompletePostObject(ctx, info.DataID, false)
		return 0, err
	}
	return info.DataID, c.CompletePostObject(ctx, info.DataID, true)
}

// Get reads an object: its metadata and its body.
func (c *Client) Get(ctx context.Context, dataID, accessPassword uint64) (MetaInfo, []byte, error) {
	mi, err := c.GetMeta(ctx, GetMetaParam{DataID: dataID, PersistenceTarget: PersistenceTarget{SlotID: NoPersistenceSlot},
		ResultOption: ResultTags | ResultRatings | ResultMetaBinary, AccessPassword: accessPassword})
	if err != nil {
		return mi, nil, err
	}
	if mi.Size == 0 {
		return mi, nil, nil
	}
	info, err := c.PrepareGetObject(ctx, PrepareGetParam{DataID: dataID, PersistenceTarget: PersistenceTarget{SlotID: NoPersistenceSlot},
		AccessPassword: accessPassword})
	if err != nil {
		return mi, nil, err
	}
	body, err := c.Download(ctx, info.URL, int64(info.Size))
	return mi, body, err
}
