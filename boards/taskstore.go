package boards

// This file: the A2A tasks in the store (bbolt), not in memory: a task a
// board was asked to run is durable before its effect, so a restart never
// loses what was asked nor runs it again. A task is readable only by the
// board that sent it (its owner, set when created); the newest maxTasks are
// kept.

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

const (
	tasksBucket = "boards-tasks"
	tasksIndex  = "\x00index" // the ids, oldest first
	maxTasks    = 1000
)

// DeleteKV is KV that can also delete.
type DeleteKV interface {
	KV
	Delete(bucket, key string) error
}

type storedTask struct {
	Owner   string    `json:"owner"`
	Version int64     `json:"version"`
	Task    *a2a.Task `json:"task"`
}

// taskStore is taskstore.Store on the store.
type taskStore struct {
	kv DeleteKV
	mu sync.Mutex
}

var _ taskstore.Store = (*taskStore)(nil)

// caller is the authenticated board of ctx ("board:NAME"), or "" inside the
// server (an execution's own updates).
func caller(ctx context.Context) string {
	if cc, ok := a2asrv.CallContextFrom(ctx); ok && cc.User != nil && cc.User.Authenticated {
		return cc.User.Name
	}
	return ""
}

func (s *taskStore) load(id a2a.TaskID) (*storedTask, error) {
	raw, found, err := s.kv.Get(tasksBucket, string(id))
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, a2a.ErrTaskNotFound
	}
	var st storedTask
	if err := json.Unmarshal(raw, &st); err != nil || st.Task == nil {
		return nil, a2a.ErrTaskNotFound
	}
	return &st, nil
}

func (s *taskStore) put(st *storedTask) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return s.kv.Put(tasksBucket, string(st.Task.ID), raw)
}

func (s *taskStore) Create(ctx context.Context, task *a2a.Task) (taskstore.TaskVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.load(task.ID); err == nil {
		return 0, taskstore.ErrTaskAlreadyExists
	}
	owner := caller(ctx)
	if o, ok := task.Metadata[metaFrom].(string); ok && owner == "" {
		owner = o
	}
	st := &storedTask{Owner: owner, Version: 1, Task: task}
	if err := s.put(st); err != nil {
		return 0, err
	}
	if err := s.index(task.ID); err != nil {
		return 0, err
	}
	return 1, nil
}

// index adds id to the list of tasks, and drops the oldest past maxTasks.
func (s *taskStore) index(id a2a.TaskID) error {
	var ids []string
	if raw, found, err := s.kv.Get(tasksBucket, tasksIndex); err != nil {
		return err
	} else if found {
		json.Unmarshal(raw, &ids)
	}
	ids = append(ids, string(id))
	for len(ids) > maxTasks {
		if err := s.kv.Delete(tasksBucket, ids[0]); err != nil {
			return err
		}
		ids = slices.Delete(ids, 0, 1)
	}
	raw, _ := json.Marshal(ids)
	return s.kv.Put(tasksBucket, tasksIndex, raw)
}

func (s *taskStore) Update(ctx context.Context, req *taskstore.UpdateRequest) (taskstore.TaskVersion, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.load(req.Task.ID)
	if err != nil {
		return 0, err
	}
	if req.PrevVersion != taskstore.TaskVersionMissing && int64(req.PrevVersion) != st.Version {
		return 0, taskstore.ErrConcurrentModification
	}
	st.Version++
	st.Task = req.Task
	if err := s.put(st); err != nil {
		return 0, err
	}
	return taskstore.TaskVersion(st.Version), nil
}

func (s *taskStore) Get(ctx context.Context, id a2a.TaskID) (*taskstore.StoredTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.load(id)
	if err != nil {
		return nil, err
	}
	// Another board's task does not exist for this one.
	if who := caller(ctx); who != "" && who != st.Owner {
		return nil, a2a.ErrTaskNotFound
	}
	return &taskstore.StoredTask{Task: st.Task, Version: taskstore.TaskVersion(st.Version)}, nil
}

func (s *taskStore) List(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, a2a.ErrUnsupportedOperation
}
