package dataset

// Word lists of the synthetic text grammar. The text is made-up business
// prose: readable, varied, free of real customer data, and made of common
// words so every tokenizer counts it sensibly (no rare-byte soup that would
// make a 3000-token prompt only 2 KB long).
var (
	nouns = []string{ //nolint:gochecknoglobals // read-only table
		"report", "invoice", "order", "account", "customer", "supplier", "shipment", "contract",
		"budget", "forecast", "server", "database", "service", "release", "feature", "ticket",
		"policy", "schedule", "warehouse", "payment", "refund", "survey", "dashboard", "team",
		"project", "roadmap", "incident", "backup", "migration", "audit", "meeting", "proposal",
		"product", "price", "market", "campaign", "request", "queue", "network", "license",
		"training", "document", "summary", "workflow", "pipeline", "cluster", "review", "plan",
	}
	adjectives = []string{ //nolint:gochecknoglobals // read-only table
		"quarterly", "monthly", "new", "old", "delayed", "urgent", "regional", "internal",
		"external", "critical", "minor", "shared", "public", "private", "weekly", "annual",
		"large", "small", "recent", "pending", "approved", "rejected", "secure", "legacy",
		"primary", "backup", "final", "draft", "complex", "simple", "global", "local",
	}
	verbs = []string{ //nolint:gochecknoglobals // read-only table
		"review", "update", "approve", "cancel", "schedule", "migrate", "summarize", "compare",
		"explain", "improve", "test", "monitor", "deploy", "document", "estimate", "prepare",
		"check", "reduce", "increase", "track", "plan", "organize", "verify", "analyze",
	}
	pastVerbs = []string{ //nolint:gochecknoglobals // read-only table
		"reviewed", "updated", "approved", "cancelled", "scheduled", "migrated", "summarized",
		"compared", "explained", "improved", "tested", "monitored", "deployed", "documented",
		"estimated", "prepared", "checked", "reduced", "increased", "tracked", "planned",
	}
	teams = []string{ //nolint:gochecknoglobals // read-only table
		"finance", "support", "sales", "operations", "platform", "security", "marketing",
		"logistics", "legal", "data", "mobile", "billing", "research", "design",
	}
	times = []string{ //nolint:gochecknoglobals // read-only table
		"last week", "this morning", "in March", "before the holidays", "after the outage",
		"during the audit", "since the last release", "at the end of the quarter", "yesterday",
		"over the weekend", "in the first week of the month", "after the price change",
	}
	docKinds = []string{ //nolint:gochecknoglobals // read-only table
		"meeting notes", "incident report", "design document", "support transcript",
		"contract draft", "project plan", "quarterly review", "product specification",
	}
	essayKinds = []string{ //nolint:gochecknoglobals // read-only table
		"report", "guide", "story", "proposal", "article", "tutorial", "analysis", "handbook",
	}
	// fillers close a small gap when fitting a prompt to its exact token count.
	// Each is a single token on its own for all built-in encodings.
	fillers = []string{" and", " also", " then", " more", " so", " now", " here", " still", " well"} //nolint:gochecknoglobals,lll // read-only table
)
