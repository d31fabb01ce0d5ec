-- GENERATED from charter.compiler.node_schemas: do not edit by hand. Regenerate with
--   python tools/gen_node_schema_sql.py
-- The JSON Schema of each user node type's compiled configuration (node type -> schema),
-- which charter._node_config_problem checks at publish (charter._verify_effective).
CREATE OR REPLACE FUNCTION charter._node_config_schemas()
RETURNS jsonb
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path = ''
AS $fn$
    SELECT $schemas${
 "action": {
  "additionalProperties": false,
  "properties": {
   "actionType": {
    "pattern": "^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$",
    "type": "string"
   },
   "payloadTemplate": {
    "additionalProperties": {
     "additionalProperties": false,
     "properties": {
      "ast": {
       "description": "the expression's AST, as charter.expr.compile_expression makes it"
      },
      "expression": {
       "type": "string"
      }
     },
     "required": [
      "expression",
      "ast"
     ],
     "type": "object"
    },
    "type": "object"
   },
   "runAs": {
    "enum": [
     "actor",
     "system",
     "service_account"
    ],
    "type": "string"
   }
  },
  "required": [
   "actionType",
   "payloadTemplate",
   "runAs"
  ],
  "title": "action node configuration",
  "type": "object"
 },
 "approval": {
  "oneOf": [
   {
    "additionalProperties": false,
    "properties": {
     "approvers": {
      "items": {
       "additionalProperties": false,
       "maxProperties": 1,
       "minProperties": 1,
       "properties": {
        "managerOf": {
         "enum": [
          "requester"
         ],
         "type": "string"
        },
        "role": {
         "minLength": 1,
         "type": "string"
        },
        "rule": {
         "additionalProperties": false,
         "properties": {
          "ast": {
           "description": "the expression's AST, as charter.expr.compile_expression makes it"
          },
          "expression": {
           "type": "string"
          }
         },
         "required": [
          "expression",
          "ast"
         ],
         "type": "object"
        },
        "user": {
         "minLength": 1,
         "type": "string"
        }
       },
       "type": "object"
      },
      "minItems": 1,
      "type": "array"
     },
     "decision": {
      "enum": [
       "any",
       "all"
      ],
      "type": "string"
     },
     "escalateAfter": {
      "pattern": "^(?=.*[1-9])P(?!$)([0-9]+Y)?([0-9]+M)?([0-9]+W)?([0-9]+D)?(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+S)?)?$",
      "type": "string"
     },
     "mode": {
      "enum": [
       "inline"
      ],
      "type": "string"
     }
    },
    "required": [
     "mode",
     "approvers",
     "decision"
    ],
    "type": "object"
   },
   {
    "additionalProperties": false,
    "properties": {
     "chainId": {
      "pattern": "\\S",
      "type": "string"
     },
     "escalateAfter": {
      "pattern": "^(?=.*[1-9])P(?!$)([0-9]+Y)?([0-9]+M)?([0-9]+W)?([0-9]+D)?(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+S)?)?$",
      "type": "string"
     },
     "mode": {
      "enum": [
       "chain"
      ],
      "type": "string"
     }
    },
    "required": [
     "mode",
     "chainId"
    ],
    "type": "object"
   }
  ],
  "title": "approval node configuration",
  "type": "object"
 },
 "condition": {
  "additionalProperties": false,
  "properties": {
   "expression": {
    "additionalProperties": false,
    "properties": {
     "ast": {
      "description": "the expression's AST, as charter.expr.compile_expression makes it"
     },
     "expression": {
      "type": "string"
     }
    },
    "required": [
     "expression",
     "ast"
    ],
    "type": "object"
   }
  },
  "required": [
   "expression"
  ],
  "title": "condition node configuration",
  "type": "object"
 },
 "notification": {
  "additionalProperties": false,
  "properties": {
   "body": {
    "type": "string"
   },
   "channel": {
    "enum": [
     "email",
     "sms",
     "in_app"
    ],
    "type": "string"
   },
   "subject": {
    "type": "string"
   },
   "to": {
    "type": "string"
   }
  },
  "required": [
   "channel",
   "to",
   "body"
  ],
  "title": "notification node configuration",
  "type": "object"
 },
 "parallel_join": {
  "additionalProperties": false,
  "properties": {
   "mode": {
    "enum": [
     "all",
     "any"
    ],
    "type": "string"
   }
  },
  "required": [
   "mode"
  ],
  "title": "parallel_join node configuration",
  "type": "object"
 },
 "parallel_split": {
  "additionalProperties": false,
  "properties": {},
  "title": "parallel_split node configuration",
  "type": "object"
 },
 "rule": {
  "additionalProperties": false,
  "properties": {
   "ruleId": {
    "pattern": "\\S",
    "type": "string"
   }
  },
  "required": [
   "ruleId"
  ],
  "title": "rule node configuration",
  "type": "object"
 },
 "script": {
  "additionalProperties": false,
  "properties": {
   "assignTo": {
    "pattern": "^context\\.[a-z_][a-z0-9_]*$",
    "type": "string"
   },
   "expression": {
    "additionalProperties": false,
    "properties": {
     "ast": {
      "description": "the expression's AST, as charter.expr.compile_expression makes it"
     },
     "expression": {
      "type": "string"
     }
    },
    "required": [
     "expression",
     "ast"
    ],
    "type": "object"
   }
  },
  "required": [
   "expression"
  ],
  "title": "script node configuration",
  "type": "object"
 },
 "wait_event": {
  "additionalProperties": false,
  "properties": {
   "eventKey": {
    "type": "string"
   },
   "timeout": {
    "pattern": "^(?=.*[1-9])P(?!$)([0-9]+Y)?([0-9]+M)?([0-9]+W)?([0-9]+D)?(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+S)?)?$",
    "type": "string"
   }
  },
  "required": [
   "eventKey"
  ],
  "title": "wait_event node configuration",
  "type": "object"
 },
 "wait_timer": {
  "additionalProperties": false,
  "oneOf": [
   {
    "required": [
     "duration"
    ]
   },
   {
    "required": [
     "until"
    ]
   }
  ],
  "properties": {
   "duration": {
    "pattern": "^(?=.*[1-9])P(?!$)([0-9]+Y)?([0-9]+M)?([0-9]+W)?([0-9]+D)?(T(?=[0-9])([0-9]+H)?([0-9]+M)?([0-9]+S)?)?$",
    "type": "string"
   },
   "until": {
    "additionalProperties": false,
    "properties": {
     "ast": {
      "description": "the expression's AST, as charter.expr.compile_expression makes it"
     },
     "expression": {
      "type": "string"
     }
    },
    "required": [
     "expression",
     "ast"
    ],
    "type": "object"
   }
  },
  "title": "wait_timer node configuration",
  "type": "object"
 },
 "webhook_out": {
  "additionalProperties": false,
  "properties": {
   "headers": {
    "additionalProperties": {
     "type": "string"
    },
    "propertyNames": {
     "pattern": "^(?!([cC][oO][nN][tT][eE][nN][tT]\\-[tT][yY][pP][eE]|[cC][oO][nN][tT][eE][nN][tT]\\-[lL][eE][nN][gG][tT][hH]|[iI][dD][eE][mM][pP][oO][tT][eE][nN][cC][yY]\\-[kK][eE][yY]|[hH][oO][sS][tT])$|[xX]\\-[cC][hH][aA][rR][tT][eE][rR]\\-)"
    },
    "type": "object"
   },
   "method": {
    "enum": [
     "POST",
     "PUT",
     "PATCH"
    ],
    "type": "string"
   },
   "payloadTemplate": {
    "additionalProperties": {
     "additionalProperties": false,
     "properties": {
      "ast": {
       "description": "the expression's AST, as charter.expr.compile_expression makes it"
      },
      "expression": {
       "type": "string"
      }
     },
     "required": [
      "expression",
      "ast"
     ],
     "type": "object"
    },
    "type": "object"
   },
   "url": {
    "pattern": "^https?://",
    "type": "string"
   }
  },
  "required": [
   "url",
   "method",
   "payloadTemplate",
   "headers"
  ],
  "title": "webhook_out node configuration",
  "type": "object"
 }
}$schemas$::jsonb
$fn$;
