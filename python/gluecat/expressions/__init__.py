"""gluecat.expressions"""
