"""The Switchyard StateGraph: state, routing, stage nodes and the builder."""
