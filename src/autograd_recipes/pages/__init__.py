"""What a page shows: its first screen, summary, code blocks, graph figures, cards, links and footer."""
