"""Markdown as lines, not widgets: a reply is parsed into blocks (`blocks`), and blocks are rendered
to strips at a given width with the look of Textual's `Markdown` widget (`render`, code coloured by
`highlight`). One leaf widget can then show any number of blocks, so layout stays cheap however
long a reply or a conversation gets (Textual's `Markdown` mounts a widget per block, and every
layout pass visits them all)."""
