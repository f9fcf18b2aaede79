"""What an answer is checked against: facts from the tool results, claims read from the answer,
and `orderbot eval`. Pure except evaluate, which runs cases through the runner."""
