// Package telegram is the Telegram channel: it long-polls the Bot API, lets only the
// people the config allows (or who pair) reach the dispatcher, and replies.
//
// Nothing is lost and nothing is done twice: every update is stored in the store's
// durable inbox together with the new getUpdates offset in one transaction before the
// offset is used (which is what acknowledges it to Telegram); processing marks an item
// started in the same transaction as the first audit intent of its first tool call; an
// item found started after a crash is reported to its sender, never run again. See
// channel.go.
//
// The files: api.go the wire types, client.go the Bot API client (token scrubbing,
// error classes, over internal/httpclient), channel.go polling and the worker, access.go who may talk and
// pairing, format.go MarkdownV2 and splitting, approvals.go inline-keyboard approvals,
// events.go pin-edge notifications.
package telegram

import "encoding/json"

// The subset of the Bot API (https://core.telegram.org/bots/api) the channel uses.
// Unknown fields are ignored, so newer servers work.

// User is a Telegram user or bot.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// Chat is where a message was sent.
type Chat struct {
	ID    int64  `json:"id"`
	Type  string `json:"type"` // private, group, supergroup, channel
	Title string `json:"title,omitempty"`
}

// Entity marks a span of a message's text (a mention, a command). Offsets and lengths
// are in UTF-16 code units.
type Entity struct {
	Type   string `json:"type"` // mention, text_mention, bot_command, ...
	Offset int    `json:"offset"`
	Length int    `json:"length"`
	User   *User  `json:"user,omitempty"`
}

// Message is a chat message; the channel reads text messages only.
type Message struct {
	MessageID      int64           `json:"message_id"`
	From           *User           `json:"from,omitempty"`
	Chat           Chat            `json:"chat"`
	Date           int64           `json:"date"`
	Text           string          `json:"text,omitempty"`
	Entities       []Entity        `json:"entities,omitempty"`
	ReplyToMessage *Message        `json:"reply_to_message,omitempty"`
	Sticker        json.RawMessage `json:"sticker,omitempty"`
}

// CallbackQuery is a press on an inline keyboard button.
type CallbackQuery struct {
	ID      string   `json:"id"`
	From    User     `json:"from"`
	Message *Message `json:"message,omitempty"`
	Data    string   `json:"data,omitempty"`
}

// Update is one event from getUpdates.
type Update struct {
	UpdateID          int64          `json:"update_id"`
	Message           *Message       `json:"message,omitempty"`
	EditedMessage     *Message       `json:"edited_message,omitempty"`
	ChannelPost       *Message       `json:"channel_post,omitempty"`
	EditedChannelPost *Message       `json:"edited_channel_post,omitempty"`
	CallbackQuery     *CallbackQuery `json:"callback_query,omitempty"`
}

// InlineButton is one button of an inline keyboard.
type InlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// InlineKeyboard is reply_markup with buttons under a message.
type InlineKeyboard struct {
	InlineKeyboard [][]InlineButton `json:"inline_keyboard"`
}

// ReplyParameters makes a message a reply (used in groups, where several people talk).
type ReplyParameters struct {
	MessageID                int64 `json:"message_id"`
	AllowSendingWithoutReply bool  `json:"allow_sending_without_reply,omitempty"`
}

// SendMessage is the sendMessage request.
type SendMessage struct {
	ChatID          int64            `json:"chat_id"`
	Text            string           `json:"text"`
	ParseMode       string           `json:"parse_mode,omitempty"`
	ReplyMarkup     *InlineKeyboard  `json:"reply_markup,omitempty"`
	ReplyParameters *ReplyParameters `json:"reply_parameters,omitempty"`
}

// EditMessageText is the editMessageText request.
type EditMessageText struct {
	ChatID      int64           `json:"chat_id"`
	MessageID   int64           `json:"message_id"`
	Text        string          `json:"text"`
	ParseMode   string          `json:"parse_mode,omitempty"`
	ReplyMarkup *InlineKeyboard `json:"reply_markup,omitempty"`
}

// AnswerCallbackQuery is the answerCallbackQuery request.
type AnswerCallbackQuery struct {
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
	ShowAlert       bool   `json:"show_alert,omitempty"`
}

// GetUpdates is the getUpdates request.
type GetUpdates struct {
	Offset         int64    `json:"offset,omitempty"`
	Limit          int      `json:"limit,omitempty"`
	Timeout        int      `json:"timeout"` // seconds of long polling
	AllowedUpdates []string `json:"allowed_updates"`
}

// response is every Bot API reply's envelope.
type response struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}
