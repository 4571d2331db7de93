import { create, createFileRegistry } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { file_svc_settings_object_v3alpha_object } from "../../gen/svc/settings/object/v3alpha/object_pb.js";
import { assertMatches, carriedBy, requestOf, resolvedMessage } from "../../src/api/settings-properties.js";
import { inheritanceChain } from "../../src/domain/contexts.js";
import { changeOf, effectiveChange, resolveAlong } from "../../src/domain/settings.js";
import { supportedLanguages } from "../../src/domain/settings-kinds.js";

/**
 * The generic path of the settings kinds (src/domain/settings-kinds.ts), without a server. The language
 * settings' string and list properties are carried here in the specification's SetString / SetStrings and
 * ResolvedString / ResolvedStrings messages: any kind may use them, not only the language service's form.
 */
const OBJECT = "svc/settings/object/v3alpha/object.proto";
const message = (name: string, fields: [string, string][]) => ({
  name,
  field: fields.map(([field, type], i) => ({
    name: field,
    number: i + 1,
    label: FieldDescriptorProto_Label.OPTIONAL,
    type: FieldDescriptorProto_Type.MESSAGE,
    typeName: `.svc.settings.object.v3alpha.${type}`,
  })),
});
const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "probe.proto",
    package: "probe",
    syntax: "proto3",
    dependency: [OBJECT],
    messageType: [
      message("SetLanguages", [
        ["default_language", "SetString"],
        ["restricted_languages", "SetStrings"],
      ]),
      message("ResolvedLanguages", [
        ["default_language", "ResolvedString"],
        ["restricted_languages", "ResolvedStrings"],
        ["supported_languages", "ResolvedStrings"],
      ]),
    ],
  }),
  (name) => (name === OBJECT ? file_svc_settings_object_v3alpha_object : undefined),
);
const SetLanguages = registry.getMessage("probe.SetLanguages")!;
const ResolvedLanguages = registry.getMessage("probe.ResolvedLanguages")!;
const fieldOf = (property: string, item?: number) => `settings.${property}.set${item === undefined ? "" : `.value[${item}]`}`;

describe("settings kinds: string and list properties on the generic path", () => {
  it("matches the specification's Set* and Resolved* messages to the kind, and refuses a mismatch", () => {
    expect(() => assertMatches("language", SetLanguages, carriedBy("set"), { settable: true })).not.toThrow();
    expect(() => assertMatches("language", ResolvedLanguages, carriedBy("value"))).not.toThrow();
    // the supported languages are fixed: no request may set them, every read shows them
    expect(() => assertMatches("language", ResolvedLanguages, carriedBy("set"), { settable: true })).toThrow(/field default_language/);
    expect(() => assertMatches("login", SetLanguages, carriedBy("set"), { settable: true })).toThrow(/property allow_register/);
  });

  it("turns set and reset into a checked change: lists without repeats, bad items named by index", () => {
    const msg = create(SetLanguages, {
      defaultLanguage: { value: { case: "reset", value: true } },
      restrictedLanguages: { value: { case: "set", value: { value: ["de", "en", "de"] } } },
    } as never);
    const request = requestOf("language", SetLanguages, msg);
    expect(request).toEqual({ default_language: { reset: true }, restricted_languages: { set: ["de", "en", "de"] } });
    expect(changeOf("language", request, fieldOf)).toEqual({ set: { restricted_languages: ["de", "en"] }, reset: ["default_language"] });

    let bad: ConnectError | undefined;
    try {
      changeOf("language", { restricted_languages: { set: ["en", "xx"] } }, fieldOf);
    } catch (e) {
      bad = ConnectError.from(e);
    }
    expect(bad?.code).toBe(Code.InvalidArgument);
    expect(bad?.rawMessage).toContain('invalid settings.restricted_languages.set.value[1]: "xx" is not a supported language');
    expect(() => changeOf("language", { default_language: { set: 3 } }, fieldOf)).toThrow(/settings.default_language.set: must be a string/);
    expect(() => changeOf("language", { supported_languages: { set: ["en"] } }, fieldOf)).toThrow(/no property supported_languages/);
  });

  it("stores only what changes, and resolves each property with its owner", () => {
    const current = { default_language: "de", restricted_languages: ["de", "en"] };
    expect(effectiveChange(current, { set: { default_language: "de" }, reset: ["restricted_languages", "unset_property"] })).toEqual({
      set: {},
      reset: ["restricted_languages"],
    });
    expect(effectiveChange(current, { set: { restricted_languages: ["de", "en"] }, reset: [] })).toBeUndefined();

    const chain = inheritanceChain({ type: "org", instanceId: "i1", orgId: "o1" });
    const values = resolveAlong("language", chain, [
      { default_language: "fr" },
      { restricted_languages: ["fr", "it"], supported_languages: ["xx"] },
      undefined,
    ]);
    expect(values.get("default_language")).toEqual({ value: "fr", owner: { type: "org", id: "o1" }, builtIn: false });
    expect(values.get("restricted_languages")).toEqual({ value: ["fr", "it"], owner: { type: "instance", id: "i1" }, builtIn: false });
    expect(values.get("supported_languages")).toEqual({ value: supportedLanguages, owner: { type: "system", id: "" }, builtIn: true });

    const read = resolvedMessage("language", ResolvedLanguages, values, chain[0]!) as unknown as Record<string, { value: unknown; owner?: { id: string } }>;
    expect(read.defaultLanguage?.value).toBe("fr");
    expect(read.defaultLanguage?.owner).toBeUndefined();
    expect(read.restrictedLanguages).toMatchObject({ value: ["fr", "it"], owner: { id: "i1" } });
    expect(read.supportedLanguages?.owner).toMatchObject({ id: "" });
  });
});
