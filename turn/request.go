package turn

import "github.com/cursorkit/cursorkit/mcpbridge"

// Request is what one prompt turn asks of an agent, the part every agent
// reads: the agents other than Cursor name it Turn, and each agent's Args
// and decoder say what a field becomes for it. The prompt travels on the
// agent's stdin only, never in its argv.
type Request struct {
	// Prompt is what the agent is asked. Neither an agent's Args nor its
	// decoder reads it; it is never quoted in an error.
	Prompt string
	// Mode is plan, ask or write ("" is plan).
	Mode Mode
	// Model is the model id; "" keeps the agent's configured model.
	Model string
	// Resume is the session (or thread) id an earlier turn reported; ""
	// starts a new one.
	Resume string
	// Tools are tools allowed besides the mode's, by the agent's own names.
	Tools []string
	// Bridge, when set, is the MCP tool bridge the turn publishes to the
	// agent (docs/contract.md, "The MCP tool bridge"), nil none: the
	// caller opened it and closes it after the turn.
	Bridge *mcpbridge.Server
}
