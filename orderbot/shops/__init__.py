"""The shops orderbot serves: each brings its data model, its tools and the stores that keep its data."""
