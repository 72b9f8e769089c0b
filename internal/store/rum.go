package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/parallel"
)

type rumIndexItem struct {
	PK      string
	SK      string
	Type    string
	Month   string
	Days    []string `dynamodbav:",omitempty"`
	Custom  []string `dynamodbav:",omitempty"`
	Expires int64    `dynamodbav:"expires,omitempty"`
}

type rumCellItem struct {
	PK      string
	SK      string
	Type    string
	Data    []byte
	Applied []string `dynamodbav:",omitempty"`
	Ver     int64
}

func (it rumCellItem) table() model.RUMTable {
	return model.RUMTable{Data: it.Data, Applied: it.Applied, Version: it.Ver}
}

// RUMIndexes reads the indexes of the given months (yyyymm); a month without one is absent
// from the map.
func (s *Store) RUMIndexes(ctx context.Context, account, website string, months []string) (map[string]model.RUMIndex, error) {
	items, err := getAll[rumIndexItem](ctx, s, keysOf(websitePK(account, website), months, rumIndexSK), true, "RUM indexes")
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.RUMIndex, len(items))
	for _, it := range items {
		out[it.Month] = model.RUMIndex{Month: it.Month, Days: it.Days, Custom: it.Custom}
	}
	return out, nil
}

// PutRUMIndex writes a month's index, which DynamoDB deletes after expires (zero: never).
func (s *Store) PutRUMIndex(ctx context.Context, account, website string, ix model.RUMIndex, expires time.Time) error {
	return s.putItem(ctx, rumIndexItem{
		PK: websitePK(account, website), SK: rumIndexSK(ix.Month), Type: "rum-index",
		Month: ix.Month, Days: ix.Days, Custom: ix.Custom, Expires: unixOrZero(expires),
	}, putAny, "RUM index")
}

// RUMTables reads the given cells; a cell never written is absent from the map. Reads run a few
// batches at a time: a report over many shards and metrics reads a few hundred cells.
func (s *Store) RUMTables(ctx context.Context, account, website string, cells []model.RUMCell, consistent bool) (map[model.RUMCell]model.RUMTable, error) {
	pk := websitePK(account, website)
	bySK := make(map[string]model.RUMCell, len(cells))
	keys := make([]map[string]ddbtypes.AttributeValue, 0, len(cells))
	for _, c := range cells {
		sk := rumCellSK(c)
		if _, dup := bySK[sk]; dup {
			continue
		}
		bySK[sk] = c
		keys = append(keys, key(pk, sk))
	}
	// Each batch decodes its items at once, as it comes: no batch's raw items outlive it.
	chunks := slices.Collect(slices.Chunk(keys, 100))
	pages, err := parallel.Map(4, len(chunks), func(i int) ([]rumCellItem, error) {
		items, err := s.batchGetPage(ctx, chunks[i], consistent)
		if err != nil {
			return nil, err
		}
		decoded := make([]rumCellItem, len(items))
		for j, av := range items {
			if err := attributevalue.UnmarshalMap(av, &decoded[j]); err != nil {
				return nil, fmt.Errorf("decode RUM table: %w", err)
			}
		}
		return decoded, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read RUM tables: %w", err)
	}
	out := make(map[model.RUMCell]model.RUMTable, len(keys))
	for _, items := range pages {
		for _, it := range items {
			out[bySK[it.SK]] = it.table()
		}
	}
	return out, nil
}

// PutRUMTable writes a table as an item, as tables were stored before day objects
// (internal/rumstore). Nothing writes them so any more: tests make such days with it.
func (s *Store) PutRUMTable(ctx context.Context, account, website string, c model.RUMCell, t model.RUMTable) error {
	return s.putItem(ctx, rumCellItem{PK: websitePK(account, website), SK: rumCellSK(c), Type: "rum", Data: t.Data, Applied: t.Applied, Ver: 1},
		putAny, "RUM item")
}

// RUMDistinct reads the distinct-page sketches of the given days; a day without one is absent.
func (s *Store) RUMDistinct(ctx context.Context, account, website string, days []string, consistent bool) (map[string]model.RUMTable, error) {
	items, err := getAll[rumCellItem](ctx, s, keysOf(websitePK(account, website), days, rumDistinctSK), consistent, "RUM distinct pages")
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.RUMTable, len(items))
	for _, it := range items {
		out[strings.TrimPrefix(it.SK, rumDistinctSK(""))] = it.table()
	}
	return out, nil
}

type rumSettingsItem struct {
	PK               string
	SK               string
	Type             string
	Groups           []rumGroupItem    `dynamodbav:",omitempty"`
	SampleRate       float64           `dynamodbav:",omitempty"`
	ExcludeLabAgents bool              `dynamodbav:",omitempty"`
	GroupNames       map[string]string `dynamodbav:",omitempty"`
}

type rumGroupItem struct {
	ID      int
	Name    string
	Pattern string
}

// RUMSettings reads a website's real-user monitoring settings; a website that never set them
// has the defaults (no groups, every view sent).
func (s *Store) RUMSettings(ctx context.Context, account, website string) (model.RUMSettings, error) {
	var it rumSettingsItem
	if found, err := s.getOr(ctx, websitePK(account, website), rumSettingsSK, "RUM settings", &it); !found {
		return model.RUMSettings{}, err
	}
	out := model.RUMSettings{SampleRate: it.SampleRate, ExcludeLabAgents: it.ExcludeLabAgents}
	for _, g := range it.Groups {
		out.Groups = append(out.Groups, model.PageGroup{ID: g.ID, Name: g.Name, Pattern: g.Pattern})
	}
	if len(it.GroupNames) > 0 {
		out.GroupNames = make(map[int]string, len(it.GroupNames))
		for id, name := range it.GroupNames {
			if n, err := strconv.Atoi(id); err == nil {
				out.GroupNames[n] = name
			}
		}
	}
	return out, nil
}

// PutRUMSettings replaces a website's real-user monitoring settings.
func (s *Store) PutRUMSettings(ctx context.Context, account, website string, set model.RUMSettings) error {
	it := rumSettingsItem{PK: websitePK(account, website), SK: rumSettingsSK, Type: "rum-settings",
		SampleRate: set.SampleRate, ExcludeLabAgents: set.ExcludeLabAgents}
	for _, g := range set.Groups {
		it.Groups = append(it.Groups, rumGroupItem{ID: g.ID, Name: g.Name, Pattern: g.Pattern})
	}
	if len(set.GroupNames) > 0 {
		it.GroupNames = make(map[string]string, len(set.GroupNames))
		for id, name := range set.GroupNames {
			it.GroupNames[strconv.Itoa(id)] = name
		}
	}
	return s.putItem(ctx, it, putAny, "RUM settings")
}
