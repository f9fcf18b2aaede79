"""The retail shop of tau2-bench: customers, products with variants, orders with payments;
its policy enforced in code."""
