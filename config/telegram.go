package config

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// The telegram section: the bot, who may talk to it, and pin notifications.
//
//	telegram:
//	  token: ${TELEGRAM_TOKEN}
//	  allow_users: [123456789]
//	  pairing: true
//	  notify: [{pin: button, edge: falling, text: "Doorbell"}]
//
// Decoding, validation and the Redacted writer of the section are all in
// this file.

// Telegram configures the Telegram channel. It is off while Token is empty.
type Telegram struct {
	Token Secret `yaml:"token"`
	// APIURL is configurable so that tests can point the client at a fake
	// Bot API server, and so that users can use a self-hosted one.
	APIURL string `yaml:"api_url"`
	// AllowUsers are the numeric Telegram user ids that may talk to the
	// agent. Everybody else gets nothing (deny by default).
	AllowUsers []int64 `yaml:"allow_users"`
	// Pairing lets an unknown user ask to be added, confirmed on the
	// console; it never grants access by itself.
	Pairing bool `yaml:"pairing"`
	// AllowChats are the group chat ids (negative numbers) where the bot
	// answers; in them only messages that mention the bot or reply to it
	// count. Groups not listed are ignored.
	AllowChats []int64 `yaml:"allow_chats"`
	// Notify sends a message to chosen users when an input pin changes
	// ("button pressed at 14:02").
	Notify []Notify `yaml:"notify"`
}

// Notify is one pin-edge event sent over Telegram.
type Notify struct {
	// Pin is a configured input pin with edge detection.
	Pin string `yaml:"pin"`
	// Edge is the change that notifies: rising, falling or both (in
	// logical levels). Empty means the pin's own edge setting.
	Edge string `yaml:"edge"`
	// Users receive the message; empty means every allow_users id. Each
	// must be in allow_users: board events do not go to strangers.
	Users []int64 `yaml:"users"`
	// Text starts the message, " at 15:04" is added; empty means
	// "<pin> rising" / "<pin> falling".
	Text string `yaml:"text"`
}

// Defaults inside a telegram section the file introduces.
const (
	defaultAPIURL = "https://api.telegram.org"
)

// defaultTelegram is off (no token) and talks to the public Bot API.
func defaultTelegram() Telegram { return Telegram{APIURL: defaultAPIURL} }

// The keys of the section.
var (
	telegramKeys = []string{"token", "api_url", "allow_users", "pairing", "allow_chats", "notify"}
	notifyKeys   = []string{"pin", "edge", "users", "text"}
)

func (d *decoder) telegram(n ast.Node, t *Telegram) {
	d.fields(n, "telegram", telegramKeys, func(k string, v ast.Node) {
		switch k {
		case "token":
			d.secret(v, "telegram.token", &t.Token)
		case "api_url":
			d.str(v, "telegram.api_url", &t.APIURL)
		case "allow_users":
			d.int64s(v, "telegram.allow_users", &t.AllowUsers)
		case "pairing":
			d.boolean(v, "telegram.pairing", &t.Pairing)
		case "allow_chats":
			d.int64s(v, "telegram.allow_chats", &t.AllowChats)
		case "notify":
			var list []Notify
			if d.items(v, "telegram.notify", func(i int, v ast.Node) {
				var nt Notify
				path := fmt.Sprintf("telegram.notify[%d]", i)
				d.fields(v, path, notifyKeys, func(k string, v ast.Node) {
					switch k {
					case "pin":
						d.str(v, path+".pin", &nt.Pin)
					case "edge":
						d.str(v, path+".edge", &nt.Edge)
					case "users":
						d.int64s(v, path+".users", &nt.Users)
					case "text":
						d.str(v, path+".text", &nt.Text)
					}
				})
				list = append(list, nt)
			}) {
				t.Notify = list
			}
		}
	})
}

func (d *decoder) validateTelegram(t *Telegram, b *Board) {
	if d.checkURL("telegram.api_url", t.APIURL) {
		// The Bot API's method names are appended to the path.
		if u, _ := url.Parse(t.APIURL); u.RawQuery != "" || u.Fragment != "" || strings.Contains(t.APIURL, "#") {
			d.errf("telegram.api_url", "must not have a query (?) or fragment (#): method names are appended to the path")
		}
	}
	// A bot token goes into every request's URL path. Its value is
	// never shown; the check names what is wrong with it.
	switch tok := t.Token.Reveal(); {
	case tok == "":
	case strings.TrimSpace(tok) != tok:
		d.errf("telegram.token", "has leading or trailing white space")
	case strings.ContainsAny(tok, "/?#%@ \t"):
		d.errf("telegram.token", "contains characters a bot token never has (/ ? # %% @ or white space)")
	}
	for i, id := range t.AllowUsers {
		if id <= 0 {
			d.errf(fmt.Sprintf("telegram.allow_users[%d]", i), "%d is not a Telegram user id (ids are positive numbers)", id)
		}
	}
	for i, id := range t.AllowChats {
		if id >= 0 {
			d.errf(fmt.Sprintf("telegram.allow_chats[%d]", i), "%d is not a group chat id (group ids are negative numbers, such as -1001234567890; people go in allow_users)", id)
		}
	}
	for i, n := range t.Notify {
		path := fmt.Sprintf("telegram.notify[%d]", i)
		if d.failed[path] {
			continue
		}
		pinEdge := ""
		switch p, ok := b.Pins[n.Pin]; {
		case n.Pin == "":
			d.required(path, "pin", " (an input pin with edge detection)")
		case !ok:
			d.errf(path+".pin", "%s is not a configured pin (pins: %s)", d.quote(path+".pin", n.Pin), strings.Join(sortedKeys(b.Pins), ", "))
		case p.Mode != "in":
			d.errf(path+".pin", "pin %q is an output; only input pins have edges to notify", n.Pin)
		case p.Edge == "" || p.Edge == "none":
			d.errf(path+".pin", "pin %q has no edge detection (set edge: both on board.pins.%s)", n.Pin, n.Pin)
		default:
			pinEdge = p.Edge
		}
		if d.has(path + ".edge") {
			if d.oneOf(path+".edge", n.Edge, edges[1:]) && pinEdge != "" && pinEdge != "both" && pinEdge != n.Edge {
				d.errf(path+".edge", "pin %q detects %s edges only (edge: %s), so it never reports %s ones", n.Pin, pinEdge, pinEdge, n.Edge)
			}
		}
		for j, id := range n.Users {
			up := fmt.Sprintf("%s.users[%d]", path, j)
			switch {
			case id <= 0:
				d.errf(up, "%d is not a Telegram user id (ids are positive numbers)", id)
			case !slices.Contains(t.AllowUsers, id):
				d.errf(up, "user %d is not in telegram.allow_users; board events go only to allowed users", id)
			}
		}
		if len(n.Users) == 0 && !d.has(path+".users") && len(t.AllowUsers) == 0 {
			d.add(d.keyAt(path), "%s: nobody to notify: list users, or set telegram.allow_users", path)
		}
	}
}

// secretValues are the section's secrets, scrubbed from every other field
// by Redacted.
func (t *Telegram) secretValues() []string { return []string{t.Token.Reveal()} }

// writeTelegram writes the telegram section for Redacted.
func (c *Config) writeTelegram(w *writer) {
	w.key(0, "telegram")
	if c.Telegram.Token != "" {
		w.kv(1, "token", yamlString(c.Telegram.Token.String()))
	}
	w.kv(1, "api_url", w.str(c.Telegram.APIURL))
	if len(c.Telegram.AllowUsers) > 0 {
		ids := make([]string, len(c.Telegram.AllowUsers))
		for i, id := range c.Telegram.AllowUsers {
			ids[i] = strconv.FormatInt(id, 10)
		}
		w.kv(1, "allow_users", "["+strings.Join(ids, ", ")+"]")
	}
	w.kv(1, "pairing", strconv.FormatBool(c.Telegram.Pairing))
	if len(c.Telegram.AllowChats) > 0 {
		w.kv(1, "allow_chats", "["+joinInts(c.Telegram.AllowChats)+"]")
	}
	if len(c.Telegram.Notify) > 0 {
		w.key(1, "notify")
		for _, n := range c.Telegram.Notify {
			w.line(2, "- pin: "+w.str(n.Pin))
			w.kvOmit(3, "edge", n.Edge)
			if len(n.Users) > 0 {
				w.kv(3, "users", "["+joinInts(n.Users)+"]")
			}
			w.kvOmit(3, "text", n.Text)
		}
	}
}

func joinInts(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}
