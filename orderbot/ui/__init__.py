"""What a person sees: transition tables, answers, --trace panels, styles, terminal input, and the
one escaping function every outside string passes. Imports the loop's values; the loop never imports this."""
