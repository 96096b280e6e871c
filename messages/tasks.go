package messages

import (
	"encoding/json/jsontext"
)

// TaskMetadata asks for a request to run as a task (2025-11-25).
type TaskMetadata struct {
	// TTL is the requested lifetime in milliseconds from creation.
	TTL *int64 `json:"ttl,omitzero"`
}

// TaskStatus is the state of a task.
type TaskStatus string

// The task statuses. A task starts working; completed, failed and cancelled
// are terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a status a task never leaves.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is the state of a task (2025-11-25). It has no MarshalJSON so that
// the results embedding it marshal its fields inline.
type Task struct {
	// TaskID is chosen by the receiver.
	TaskID string     `json:"taskId"`
	Status TaskStatus `json:"status"`
	// StatusMessage describes the status for humans.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is the lifetime in milliseconds from creation; nil (written as
	// null, never omitted) means unlimited.
	TTL *int64 `json:"ttl"`
	// PollInterval suggests how often to poll, in milliseconds.
	PollInterval *int64 `json:"pollInterval,omitzero"`
}

// CreateTaskResult answers a task-augmented request in place of its
// ordinary result.
type CreateTaskResult struct {
	Task *Task `json:"task"`
	Meta Meta  `json:"_meta,omitempty"`
}

// GetTaskParams are the params of tasks/get.
type GetTaskParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// GetTaskResult is the result of tasks/get: the task's fields inline.
type GetTaskResult struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// GetTaskPayloadParams are the params of tasks/result.
type GetTaskPayloadParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// GetTaskPayloadResult is the result of tasks/result: exactly the result the
// underlying request would have returned (a CallToolResult for tools/call),
// kept raw.
type GetTaskPayloadResult = jsontext.Value

// ListTasksParams are the params of tasks/list.
type ListTasksParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListTasksResult is one page of tasks/list.
type ListTasksResult struct {
	// Tasks never marshals as null.
	Tasks      []*Task `json:"tasks"`
	NextCursor string  `json:"nextCursor,omitempty"`
	Meta       Meta    `json:"_meta,omitempty"`
}

// CancelTaskParams are the params of tasks/cancel.
type CancelTaskParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// CancelTaskResult is the result of tasks/cancel: the task's fields inline,
// its status now cancelled.
type CancelTaskResult struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// TaskStatusParams are the params of notifications/tasks/status: the task's
// fields inline.
type TaskStatusParams struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}
